"""Streamable HTTP: serve an engine (replay, world) over HTTP, and record through a reverse proxy.

Nothing here is imported by the stdio paths; starlette, uvicorn and httpx are imported inside
functions so that ``import harn_mcp_mock.http`` stays cheap.
"""
