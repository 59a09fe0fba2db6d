"""The only code that hashes: canonical JSON and the BLAKE3 content-addressed store."""

from harn_mcp_mock.store.canonical import canonical_bytes, digest, digest_json
from harn_mcp_mock.store.cas import INLINE_THRESHOLD, CasStore

__all__ = ["INLINE_THRESHOLD", "CasStore", "canonical_bytes", "digest", "digest_json"]
