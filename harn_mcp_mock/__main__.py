"""`python -m harn_mcp_mock ...` is `harn-mcp-mock ...` (that is, `harn mcp mock ...`)."""

from harn_mcp_mock.cli.main import mock_main

if __name__ == "__main__":
    mock_main()
