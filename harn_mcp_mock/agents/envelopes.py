"""The protocol's error envelope and its code table (spec section "Error taxonomy").

Protocol errors are *data*: an :class:`ErrorEnvelope` is what a server sends and a client
parses. The one Python exception this package raises on purpose is :class:`ProtocolError`, a
:class:`~harn_mcp_mock.errors.HarnError` (exit 2) that carries such an envelope, so a resource
that fails validation or a refused lifecycle transition can later be turned into a response.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from harn_mcp_mock.agents.enums import RawEnum
from harn_mcp_mock.errors import HarnError

__all__ = [
    "DEFAULT_ERROR_TYPE",
    "ERROR_CODES",
    "ERROR_TYPES",
    "ErrorCode",
    "ErrorCodeInfo",
    "ErrorEnvelope",
    "ErrorType",
    "ProtocolError",
]


@dataclass(frozen=True, slots=True)
class ErrorCodeInfo:
    http_status: int
    meaning: str


#: Core error codes, HTTP status and meaning, in the order of the spec's table.
ERROR_CODES: Mapping[str, ErrorCodeInfo] = MappingProxyType(
    {
        "invalid_request": ErrorCodeInfo(400, "Request shape or value is invalid."),
        "invalid_state_transition": ErrorCodeInfo(400, "Requested lifecycle transition is not allowed."),
        "unauthenticated": ErrorCodeInfo(401, "Authentication is missing or invalid."),
        "permission_denied": ErrorCodeInfo(403, "Actor is not allowed to perform the action."),
        "resource_not_found": ErrorCodeInfo(404, "Resource is absent or hidden from caller."),
        "conflict": ErrorCodeInfo(409, "Request conflicts with current resource state."),
        "idempotency_key_reused": ErrorCodeInfo(409, "Same key was used with a different body."),
        "cursor_expired": ErrorCodeInfo(410, "Event or replay cursor is no longer available."),
        "payload_too_large": ErrorCodeInfo(413, "Request or artifact exceeds configured limit."),
        "policy_violation": ErrorCodeInfo(
            422, "Persona, quota, approval, or capability policy blocked work."
        ),
        "resource_locked": ErrorCodeInfo(423, "Resource is locked by another branch, worker, or lease."),
        "unsupported_protocol_version": ErrorCodeInfo(426, "Version header is absent or unsupported."),
        "rate_limited": ErrorCodeInfo(429, "Rate limit or quota throttled the request."),
        "client_closed_request": ErrorCodeInfo(499, "Client disconnected before completion."),
        "internal_error": ErrorCodeInfo(500, "Unexpected server error."),
        "upstream_unavailable": ErrorCodeInfo(502, "Upstream dependency failed or timed out."),
        "service_unavailable": ErrorCodeInfo(503, "Harness is unavailable or draining."),
        "deadline_exceeded": ErrorCodeInfo(504, "Request deadline expired."),
    }
)

#: Core error types and their descriptions.
ERROR_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "request_error": "malformed or semantically invalid request.",
        "auth_error": "authentication failed or token is invalid.",
        "permission_error": "authenticated caller lacks permission.",
        "not_found_error": "requested resource is not visible to the caller.",
        "conflict_error": "current state conflicts with the request.",
        "rate_limit_error": "rate or quota limit blocked the request.",
        "runtime_error": "agent, workflow, tool, or provider execution failed.",
        "upstream_error": "connector, model provider, host, or tool backend failed.",
        "server_error": "unexpected Harness failure.",
    }
)

#: The type :meth:`ErrorEnvelope.of` puts beside each code. The spec lists codes and types
#: separately and never pairs them; this pairing is ours (see docs/protocol.md).
DEFAULT_ERROR_TYPE: Mapping[str, str] = MappingProxyType(
    {
        "invalid_request": "request_error",
        "invalid_state_transition": "conflict_error",
        "unauthenticated": "auth_error",
        "permission_denied": "permission_error",
        "resource_not_found": "not_found_error",
        "conflict": "conflict_error",
        "idempotency_key_reused": "conflict_error",
        "cursor_expired": "request_error",
        "payload_too_large": "request_error",
        "policy_violation": "permission_error",
        "resource_locked": "conflict_error",
        "unsupported_protocol_version": "request_error",
        "rate_limited": "rate_limit_error",
        "client_closed_request": "request_error",
        "internal_error": "server_error",
        "upstream_unavailable": "upstream_error",
        "service_unavailable": "server_error",
        "deadline_exceeded": "runtime_error",
    }
)


class ErrorCode(RawEnum):
    __slots__ = ()
    VALUES = tuple(ERROR_CODES)


class ErrorType(RawEnum):
    __slots__ = ()
    VALUES = tuple(ERROR_TYPES)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEnvelope:
    """``{"error": {code, message, type, param?, request_id?, details?}}``."""

    FIELDS: ClassVar[tuple[str, ...]] = ("code", "message", "type", "param", "request_id", "details")

    code: ErrorCode
    message: str
    type: ErrorType
    param: str | None = None
    request_id: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        code: str,
        message: str,
        *,
        param: str | None = None,
        request_id: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> ErrorEnvelope:
        """An envelope for a core ``code`` with its default type."""
        if code not in ERROR_CODES:
            raise ValueError(f"unknown core error code {code!r}")
        return cls(
            code=ErrorCode(code),
            message=message,
            type=ErrorType(DEFAULT_ERROR_TYPE[code]),
            param=param,
            request_id=request_id,
            details=dict(details or {}),
        )

    @property
    def http_status(self) -> int:
        """The code's HTTP status; 500 for a code this version does not define."""
        info = ERROR_CODES.get(str(self.code))
        return info.http_status if info is not None else 500

    @classmethod
    def from_dict(cls, data: Any) -> ErrorEnvelope:
        if not isinstance(data, Mapping) or not isinstance(data.get("error"), Mapping):
            raise ProtocolError.invalid(
                "an error response is an object with an 'error' object", param="error"
            )
        body = data["error"]
        for name in ("code", "message", "type"):
            if not isinstance(body.get(name), str):
                raise ProtocolError.invalid(f"error.{name} must be a string", param=f"error.{name}")
        for name in ("param", "request_id"):
            if body.get(name) is not None and not isinstance(body[name], str):
                raise ProtocolError.invalid(f"error.{name} must be a string or null", param=f"error.{name}")
        details = body.get("details", {})
        if details is None:
            details = {}
        if not isinstance(details, Mapping):
            raise ProtocolError.invalid("error.details must be an object", param="error.details")
        extra = {k: v for k, v in body.items() if k not in cls.FIELDS}
        return cls(
            code=ErrorCode(body["code"]),
            message=body["message"],
            type=ErrorType(body["type"]),
            param=body.get("param"),
            request_id=body.get("request_id"),
            details={**extra, **details},  # unknown fields kept, under details
        )

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": str(self.code), "message": self.message, "type": str(self.type)}
        if self.param is not None:
            body["param"] = self.param
        if self.request_id is not None:
            body["request_id"] = self.request_id
        body["details"] = dict(self.details)
        return {"error": body}


class ProtocolError(HarnError):
    """A protocol rule was broken; ``envelope`` is the error a server would answer with."""

    exit_code = 2

    def __init__(self, envelope: ErrorEnvelope) -> None:
        self.envelope = envelope
        super().__init__(envelope.message, where=envelope.param)

    @classmethod
    def invalid(cls, message: str, *, param: str | None = None) -> ProtocolError:
        return cls(ErrorEnvelope.of("invalid_request", message, param=param))
