"""Redaction: no secret reaches a cassette, a sidecar, a log line or an error message.

A :class:`RedactionPolicy` (the built-in default, or a JSON file merged over it) says what is a
secret: object keys (``password``, ``api_key``, ``Authorization``, ...), JSON pointers, named
regular expressions (GitHub, AWS, OpenAI/Anthropic, Slack, Google, JWT, PEM private keys,
Bearer/Basic values, URL passwords), the server's own argv and environment, and random-looking
tokens (Shannon entropy); and what is not (``allow`` rules, which win). A :class:`Redactor`,
built once per recorded server with :meth:`RedactionPolicy.redactor`, replaces each secret with
a numbered placeholder (``[REDACTED:1]``; the same secret, the same number). See
``docs/redaction.md``.
"""

from harn_mcp_mock.redact.pipeline import Redactor
from harn_mcp_mock.redact.placeholders import PLACEHOLDER_RE, normalize_placeholders
from harn_mcp_mock.redact.policy import RedactionPolicy

__all__ = ["PLACEHOLDER_RE", "RedactionPolicy", "Redactor", "normalize_placeholders"]
