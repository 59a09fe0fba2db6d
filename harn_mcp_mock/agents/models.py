# ruff: noqa: RUF009  -- req()/enum()/opt() return dataclasses.field(...) carrying the field table
"""Protocol v1 resources as frozen records, parsed leniently and written back faithfully.

Each resource lists the spec's *required* fields as typed attributes. ``from_dict``
checks that they are present and of the right JSON type, and otherwise follows the client rules
of the spec's "Versioning" section:

* the optional fields the spec names for a resource (``Task.persona_id``, ``Persona.tools``,
  ...) are kept, as given, in ``optional``;
* every other unknown field is preserved under ``metadata`` (an explicit ``metadata`` entry
  of the same name wins);
* an enum value this version does not define is kept raw (:class:`~.enums.RawEnum`,
  ``.known`` False), never rejected and never read as success.

``to_dict`` writes the wire object back: the common envelope, required fields, ``optional``
entries and ``metadata``. A field the spec says is required-but-nullable (``uri``,
``default_branch_id``, ...) is always written, ``null`` included.

:func:`json_schema` derives a JSON Schema (2020-12) from the same field table; the shipped
copies live in ``protocol/schemas/`` and a test keeps them identical to the derived ones.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Self, TypeVar

from harn_mcp_mock.agents.enums import (
    ArtifactKind,
    AutonomyTier,
    BranchKind,
    ConnectorStatus,
    MemoryScope,
    MessageRole,
    OutcomeStatus,
    PartType,
    QuotaScope,
    RawEnum,
    ReceiptPolicy,
    SessionState,
    TaskStatus,
    Visibility,
)
from harn_mcp_mock.agents.envelopes import ProtocolError

__all__ = [
    "RESOURCE_TYPES",
    "Artifact",
    "Branch",
    "Connector",
    "Event",
    "HarnAgentCard",
    "Memory",
    "Message",
    "Outcome",
    "Part",
    "Persona",
    "Quota",
    "Receipt",
    "ResourceRef",
    "Session",
    "Skill",
    "Task",
    "Vault",
    "Workspace",
    "json_schema",
]

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


class K(Enum):
    """JSON shape of a field."""

    STR = "string"
    TIMESTAMP = "timestamp"
    INT = "integer"
    STR_OR_INT = "string|integer"
    OBJECT = "object"
    STR_OR_OBJECT = "string|object"
    ARRAY = "array"
    STR_ARRAY = "string[]"
    ANY = "any"
    ENUM = "enum"
    REF = "ref"
    PARTS = "parts"


@dataclass(frozen=True, slots=True)
class Spec:
    kind: K
    required: bool = True
    nullable: bool = False
    enum: type[RawEnum] | None = None


def req(kind: K, *, nullable: bool = False) -> Any:
    return field(metadata={"spec": Spec(kind, nullable=nullable)})


def enum(cls: type[RawEnum]) -> Any:
    return field(metadata={"spec": Spec(K.ENUM, enum=cls)})


def opt(kind: K) -> Any:
    return field(default=None, metadata={"spec": Spec(kind, required=False, nullable=True)})


def _bag() -> Any:
    return field(default_factory=dict)


# --------------------------------------------------------------------------- value parsing

_JSON_TYPES = {
    K.STR: "a string",
    K.TIMESTAMP: "an RFC3339 timestamp string",
    K.INT: "an integer",
    K.STR_OR_INT: "a string or an integer",
    K.OBJECT: "an object",
    K.STR_OR_OBJECT: "a string or an object",
    K.ARRAY: "an array",
    K.STR_ARRAY: "an array of strings",
    K.ANY: "a JSON value",
    K.ENUM: "a string",
    K.REF: "an {object, id} pointer",
    K.PARTS: "an array of Parts",
}


def _fail(where: str, spec: Spec) -> ProtocolError:
    expected = _JSON_TYPES[spec.kind] + (" or null" if spec.nullable else "")
    return ProtocolError.invalid(f"{where} must be {expected}", param=where)


def _parse(value: Any, spec: Spec, where: str) -> Any:
    if value is None:
        if spec.nullable:
            return None
        raise _fail(where, spec)
    kind = spec.kind
    if kind is K.STR or kind is K.ENUM:
        if not isinstance(value, str):
            raise _fail(where, spec)
        return spec.enum(value) if spec.enum is not None else value
    if kind is K.TIMESTAMP:
        if not isinstance(value, str) or not _RFC3339.match(value):
            raise _fail(where, spec)
        return value
    if kind is K.INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(where, spec)
        return value
    if kind is K.STR_OR_INT:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise _fail(where, spec)
        return value
    if kind is K.OBJECT:
        if not isinstance(value, Mapping):
            raise _fail(where, spec)
        return dict(value)
    if kind is K.STR_OR_OBJECT:
        if not isinstance(value, str | Mapping):
            raise _fail(where, spec)
        return value if isinstance(value, str) else dict(value)
    if kind is K.ARRAY:
        if not isinstance(value, list | tuple):
            raise _fail(where, spec)
        return tuple(value)
    if kind is K.STR_ARRAY:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise _fail(where, spec)
        return tuple(value)
    if kind is K.REF:
        return ResourceRef.from_dict(value, where=where)
    if kind is K.PARTS:
        if not isinstance(value, list | tuple):
            raise _fail(where, spec)
        return tuple(Part.from_dict(v, where=f"{where}[{i}]") for i, v in enumerate(value))
    return value  # K.ANY


def _dump(value: Any) -> Any:
    if isinstance(value, ResourceRef | Part):
        return value.to_dict()
    if isinstance(value, RawEnum):
        return str(value)
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    return value


def _spec_fields(cls: type) -> list[tuple[str, Spec]]:
    return [(f.name, f.metadata["spec"]) for f in dataclasses.fields(cls) if "spec" in f.metadata]


# --------------------------------------------------------------------------- building blocks


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """``{object, id}``: a pointer to a resource."""

    object: str
    id: str

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "ref") -> ResourceRef:
        if not isinstance(data, Mapping):
            raise ProtocolError.invalid(f"{where} must be an {{object, id}} pointer", param=where)
        for name in ("object", "id"):
            if not isinstance(data.get(name), str):
                raise ProtocolError.invalid(f"{where}.{name} must be a string", param=f"{where}.{name}")
        return cls(object=data["object"], id=data["id"])

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object, "id": self.id}


#: Per core Part type, the fields it requires besides ``type`` and ``visibility``.
PART_FIELDS: Mapping[str, tuple[str, ...]] = {
    "text": ("text",),
    "json": ("value",),
    "tool_call": ("tool_call_id", "name", "input"),
    "tool_result": ("tool_call_id", "output", "status"),
    "artifact_ref": ("artifact_id",),
    "file_ref": ("uri", "mime_type"),
    "image_ref": ("artifact_id", "mime_type"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One block of message content; the type-specific fields are in ``fields``.

    A Part of an unknown type keeps all its fields; ``type.known`` is False.
    """

    type: PartType
    visibility: Visibility
    fields: Mapping[str, Any] = _bag()

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "part") -> Part:
        if not isinstance(data, Mapping):
            raise ProtocolError.invalid(f"{where} must be an object", param=where)
        for name in ("type", "visibility"):
            if not isinstance(data.get(name), str):
                raise ProtocolError.invalid(f"{where}.{name} must be a string", param=f"{where}.{name}")
        for name in PART_FIELDS.get(data["type"], ()):
            if name not in data:
                raise ProtocolError.invalid(
                    f"{where}.{name} is required for a {data['type']} part", param=f"{where}.{name}"
                )
        rest = {k: v for k, v in data.items() if k not in ("type", "visibility")}
        return cls(type=PartType(data["type"]), visibility=Visibility(data["visibility"]), fields=rest)

    def to_dict(self) -> dict[str, Any]:
        return {"type": str(self.type), **self.fields, "visibility": str(self.visibility)}


_R = TypeVar("_R", bound="Resource")


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """Common behaviour; subclasses declare ``OBJECT``, ``OPTIONAL`` and their required fields."""

    OBJECT: ClassVar[str | None]
    OPTIONAL: ClassVar[tuple[str, ...]] = ()
    #: Optional fields named like ids or timestamps are checked to be strings (or null).
    optional: Mapping[str, Any] = _bag()
    metadata: Mapping[str, Any] = _bag()

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        name = cls.OBJECT or cls.__name__.lower()
        if not isinstance(data, Mapping):
            raise ProtocolError.invalid(f"a {name} must be a JSON object", param=name)
        if cls.OBJECT is not None and data.get("object", cls.OBJECT) != cls.OBJECT:
            raise ProtocolError.invalid(
                f"{name}.object must be {cls.OBJECT!r}, got {data.get('object')!r}", param=f"{name}.object"
            )
        values: dict[str, Any] = {}
        known: set[str] = {"object", "metadata"}
        for fname, spec in _spec_fields(cls):
            known.add(fname)
            where = f"{name}.{fname}"
            if fname not in data:
                if spec.required:
                    raise ProtocolError.invalid(f"missing required field: {where}", param=where)
                continue
            values[fname] = _parse(data[fname], spec, where)
        optional: dict[str, Any] = {}
        for fname in cls.OPTIONAL:
            if fname in data:
                known.add(fname)
                value = data[fname]
                if fname.endswith(("_id", "_at")) and not (value is None or isinstance(value, str)):
                    raise ProtocolError.invalid(
                        f"{name}.{fname} must be a string or null", param=f"{name}.{fname}"
                    )
                optional[fname] = value
        metadata = data.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise ProtocolError.invalid(f"{name}.metadata must be an object", param=f"{name}.metadata")
        unknown = {k: v for k, v in data.items() if k not in known}
        return cls(**values, optional=optional, metadata={**unknown, **metadata})

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.OBJECT is not None:
            out["object"] = self.OBJECT
        for fname, spec in _spec_fields(type(self)):
            value = getattr(self, fname)
            if value is None and not (spec.required and spec.nullable):
                continue
            out[fname] = _dump(value)
        out.update(self.optional)
        if self.metadata or self.OBJECT is not None:  # the common envelope always has metadata
            out["metadata"] = dict(self.metadata)
        return out


# --------------------------------------------------------------------------- the resources


@dataclass(frozen=True, slots=True, kw_only=True)
class Persona(Resource):
    OBJECT = "persona"
    OPTIONAL = (
        "tools", "capabilities", "triggers", "schedules", "handoffs", "context_packs", "evals",
        "owner", "model_policy", "rollout_policy", "quota_id",
    )  # fmt: skip
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    name: str = req(K.STR)
    version: str = req(K.STR)
    entry_workflow: str = req(K.STR)
    description: str = req(K.STR)
    autonomy_tier: AutonomyTier = enum(AutonomyTier)
    receipt_policy: ReceiptPolicy = enum(ReceiptPolicy)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace(Resource):
    OBJECT = "workspace"
    OPTIONAL = ("host", "repository", "tenant_id", "capabilities", "connectors", "quota_id")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    name: str = req(K.STR)
    root: str = req(K.STR)
    default_branch_id: str | None = req(K.STR, nullable=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Session(Resource):
    OBJECT = "session"
    OPTIONAL = (
        "persona_id", "root_session_id", "parent_session_id", "branch_id", "last_event_id",
        "summary", "expires_at",
    )  # fmt: skip
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    workspace_id: str = req(K.STR)
    state: SessionState = enum(SessionState)
    transcript: str | Mapping[str, Any] = req(K.STR_OR_OBJECT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Task(Resource):
    OBJECT = "task"
    OPTIONAL = (
        "persona_id", "branch_id", "parent_task_id", "assigned_agent_id", "receipt_id", "outcome_id",
        "quota_id", "started_at", "completed_at", "canceled_at", "failure",
    )  # fmt: skip
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    session_id: str = req(K.STR)
    workspace_id: str = req(K.STR)
    status: TaskStatus = enum(TaskStatus)
    input: Mapping[str, Any] = req(K.OBJECT)
    created_by: str = req(K.STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch(Resource):
    OBJECT = "branch"
    OPTIONAL = ("parent_branch_id", "session_id", "task_id", "worktree_uri", "created_by", "merged_into")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    workspace_id: str = req(K.STR)
    kind: BranchKind = enum(BranchKind)
    base_ref: str = req(K.STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class Message(Resource):
    OBJECT = "message"
    id: str = req(K.STR)
    created_at: str = req(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    role: MessageRole = enum(MessageRole)
    parts: tuple[Part, ...] = req(K.PARTS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact(Resource):
    OBJECT = "artifact"
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    kind: ArtifactKind = enum(ArtifactKind)
    mime_type: str = req(K.STR)
    uri: str | None = req(K.STR, nullable=True)
    visibility: Visibility = enum(Visibility)
    sha256: str | None = req(K.STR, nullable=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnAgentCard(Resource):
    OBJECT = "harn_agent_card"
    OPTIONAL = (
        "persona_ids", "capabilities", "auth_schemes", "receipt_policy", "quotas", "provider",
        "harn_interfaces", "public_url", "signature",
    )  # fmt: skip
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    name: str = req(K.STR)
    description: str = req(K.STR)
    protocol_version: str = req(K.STR)
    a2a_card: Mapping[str, Any] = req(K.OBJECT)
    skills: tuple[Any, ...] = req(K.ARRAY)


@dataclass(frozen=True, slots=True, kw_only=True)
class Event(Resource):
    OBJECT = "event"
    OPTIONAL = (
        "trace_id", "span_id", "session_id", "task_id", "workspace_id", "actor", "idempotency_key",
        "previous_event_id", "receipt_id",
    )  # fmt: skip
    id: str | int = req(K.STR_OR_INT)
    created_at: str = req(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    event: str = req(K.STR)
    resource: ResourceRef = req(K.REF)
    sequence: int = req(K.INT)
    payload: Mapping[str, Any] = req(K.OBJECT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Receipt(Resource):
    """The receipt envelope. Hash and verify receipts as dicts (``protocol.receipts``), not
    through this model: ``from_dict`` moves unknown top-level fields under ``metadata``."""

    OBJECT = None  # receipts carry ``schema``, not ``object``
    OPTIONAL = ("approvals", "redactions", "signatures")
    schema: str = req(K.STR)
    receipt_id: str = req(K.STR)
    subject: ResourceRef = req(K.REF)
    issuer: Any = req(K.ANY)
    issued_at: str = req(K.TIMESTAMP)
    identifiers: Mapping[str, Any] = req(K.OBJECT)
    lifecycle: Mapping[str, Any] = req(K.OBJECT)
    trust: Mapping[str, Any] = req(K.OBJECT)
    autonomy_budget: Any = req(K.ANY)
    replay_input: Any = req(K.ANY)
    model_route: Mapping[str, Any] = req(K.OBJECT)
    cost: Mapping[str, Any] = req(K.OBJECT)
    side_effects: Any = req(K.ANY)
    final_artifacts: tuple[Any, ...] = req(K.ARRAY)
    chain: Mapping[str, Any] = req(K.OBJECT)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        receipt = super(Receipt, cls).from_dict(data)
        if not isinstance(receipt.chain.get("receipt_hash"), str):
            raise ProtocolError.invalid(
                "missing required field: receipt.chain.receipt_hash", param="receipt.chain"
            )
        return receipt


@dataclass(frozen=True, slots=True, kw_only=True)
class Memory(Resource):
    OBJECT = "memory"
    OPTIONAL = ("expires_at", "embedding_ref", "visibility", "redaction_policy", "confidence")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    scope: MemoryScope = enum(MemoryScope)
    owner_id: str = req(K.STR)
    content: Any = req(K.ANY)
    provenance: Any = req(K.ANY)


@dataclass(frozen=True, slots=True, kw_only=True)
class Vault(Resource):
    OBJECT = "vault"
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    workspace_id: str | None = req(K.STR, nullable=True)
    provider: str = req(K.STR)
    capabilities: tuple[Any, ...] = req(K.ARRAY)


@dataclass(frozen=True, slots=True, kw_only=True)
class Connector(Resource):
    OBJECT = "connector"
    OPTIONAL = ("dedupe_policy", "auth", "webhook", "polling", "target_persona_id", "target_session_id")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    provider: str = req(K.STR)
    workspace_id: str = req(K.STR)
    status: ConnectorStatus = enum(ConnectorStatus)
    event_kinds: tuple[str, ...] = req(K.STR_ARRAY)


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill(Resource):
    OBJECT = "skill"
    OPTIONAL = ("source", "version", "capabilities", "requires_approval", "deprecated")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    name: str = req(K.STR)
    description: str = req(K.STR)
    input_schema: Mapping[str, Any] | None = req(K.OBJECT, nullable=True)
    output_schema: Mapping[str, Any] | None = req(K.OBJECT, nullable=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome(Resource):
    OBJECT = "outcome"
    OPTIONAL = ("messages", "artifacts", "handoffs", "receipt_id", "failure", "cost", "metrics")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    task_id: str = req(K.STR)
    status: OutcomeStatus = enum(OutcomeStatus)
    summary: str = req(K.STR)


@dataclass(frozen=True, slots=True, kw_only=True)
class Quota(Resource):
    OBJECT = "quota"
    OPTIONAL = ("reset_at", "hard_limit", "soft_limit", "exhaustion_reason", "last_receipt_id")
    id: str = req(K.STR)
    created_at: str | None = opt(K.TIMESTAMP)
    updated_at: str | None = opt(K.TIMESTAMP)
    scope: QuotaScope = enum(QuotaScope)
    limits: Mapping[str, Any] = req(K.OBJECT)
    usage: Mapping[str, Any] = req(K.OBJECT)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        quota = super(Quota, cls).from_dict(data)
        numeric = [v for v in quota.limits.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        if not numeric:
            raise ProtocolError.invalid(
                "quota.limits must hold one or more numeric limits", param="quota.limits"
            )
        return quota


#: Every resource class, by schema file stem.
RESOURCE_TYPES: Mapping[str, type[Resource]] = {
    "persona": Persona,
    "workspace": Workspace,
    "session": Session,
    "task": Task,
    "branch": Branch,
    "message": Message,
    "artifact": Artifact,
    "harn_agent_card": HarnAgentCard,
    "event": Event,
    "receipt": Receipt,
    "memory": Memory,
    "vault": Vault,
    "connector": Connector,
    "skill": Skill,
    "outcome": Outcome,
    "quota": Quota,
}

# --------------------------------------------------------------------------- JSON Schema

_REF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["object", "id"],
    "properties": {"object": {"type": "string"}, "id": {"type": "string"}},
}


def _part_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", "visibility"],
        "properties": {
            "type": {"type": "string"},
            "visibility": {"enum": list(Visibility.VALUES)},
        },
        "allOf": [
            {"if": {"properties": {"type": {"const": t}}}, "then": {"required": list(names)}}
            for t, names in PART_FIELDS.items()
        ],
    }


def _field_schema(spec: Spec) -> dict[str, Any]:
    kind = spec.kind
    schema: dict[str, Any]
    if kind is K.ENUM:
        assert spec.enum is not None
        schema = {"enum": list(spec.enum.VALUES)}
    elif kind is K.TIMESTAMP:
        schema = {"type": "string", "pattern": _RFC3339.pattern}
    elif kind is K.STR_OR_INT:
        schema = {"type": ["string", "integer"]}
    elif kind is K.STR_OR_OBJECT:
        schema = {"type": ["string", "object"]}
    elif kind is K.STR_ARRAY:
        schema = {"type": "array", "items": {"type": "string"}}
    elif kind is K.REF:
        schema = {"$ref": "#/$defs/ResourceRef"}
    elif kind is K.PARTS:
        schema = {"type": "array", "items": {"$ref": "#/$defs/Part"}}
    elif kind is K.ANY:
        schema = {} if spec.nullable else {"not": {"type": "null"}}
    else:
        schema = {"type": kind.value}
    if spec.nullable and kind is not K.ANY:
        schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def json_schema(cls: type[Resource]) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a resource's wire object, derived from its field table.

    Enums list the known values: the schema is the *producer* contract (what a v1 server
    sends), while ``from_dict`` stays lenient as the spec asks of clients.
    """
    stem = next(k for k, v in RESOURCE_TYPES.items() if v is cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    if cls.OBJECT is not None:
        properties["object"] = {"const": cls.OBJECT}
    for fname, spec in _spec_fields(cls):
        properties[fname] = _field_schema(spec)
        if spec.required:
            required.append(fname)
    for fname in cls.OPTIONAL:
        if fname.endswith(("_id", "_at")):
            properties[fname] = {"type": ["string", "null"]}
        else:
            properties[fname] = {}
    properties["metadata"] = {"type": "object"}
    if cls is Receipt:
        properties["schema"] = {"const": "receipt-2026-04-25"}
        properties["chain"] = {
            "type": "object",
            "required": ["receipt_hash"],
            "properties": {
                "receipt_hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                "previous_receipt_hash": {
                    "anyOf": [{"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}, {"type": "null"}]
                },
                "merkle_root": {"type": ["string", "null"]},
            },
        }
    if cls is Quota:
        properties["limits"] = {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": True,
        }
    defs: dict[str, Any] = {"ResourceRef": _REF_SCHEMA}
    if cls is Message:
        defs["Part"] = _part_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"harn-agents-protocol-v1/{stem}.schema.json",
        "title": cls.__name__,
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": True,
        "$defs": defs,
    }
