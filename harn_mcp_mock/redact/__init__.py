"""Redaction: no secret reaches a cassette, a sidecar, a log line or an error message.

A :class:`RedactionPolicy` (the built-in default, or a JSON file merged over it) says what is a
secret: object keys (``password``, ``api_key``, ``Authorization``, ...), JSON pointers, named
regular expressions (about a hundred token formats: cloud, CI/CD, observability, payment, chat,
AI providers, JWT, PEM/OpenSSH/PGP/PuTTY private keys, Bearer/Basic values, URL passwords), the
server's own argv and environment (and, at replay, their fingerprints kept in the cassette), and
random-looking tokens (Shannon entropy, off by default); and what is not (``allow`` rules, which
win). Text-like base64 resource blobs are decoded and redacted inside. A :class:`Redactor`,
built once per recorded server with :meth:`RedactionPolicy.redactor`, replaces each secret with
a numbered placeholder (``[REDACTED:1]``; the same secret, the same number). See
``docs/redaction.md``.
"""

from harn_mcp_mock.redact.pipeline import Redactor
from harn_mcp_mock.redact.placeholders import PLACEHOLDER_RE, normalize_placeholders
from harn_mcp_mock.redact.policy import RedactionPolicy

__all__ = ["PLACEHOLDER_RE", "RedactionPolicy", "Redactor", "normalize_placeholders"]
