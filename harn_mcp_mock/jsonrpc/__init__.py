"""The only code that touches raw bytes of the wire: frames, line framing, stdio processes."""

from harn_mcp_mock.jsonrpc.frames import CLIENT, SERVER, Frame, parse_frame
from harn_mcp_mock.jsonrpc.framing import LineSplitter, encode_message

__all__ = ["CLIENT", "SERVER", "Frame", "LineSplitter", "encode_message", "parse_frame"]
