"""docs/run-folder.schema.json, generated from the run folder's types (:mod:`harn_mcp_mock.runner.folder`:
:class:`~harn_mcp_mock.runner.folder.RunInfo`, :class:`~harn_mcp_mock.runner.folder.TrialRecord`,
:class:`~harn_mcp_mock.runner.folder.WorldReport`) by
``python -m harn_mcp_mock.runner.schema > docs/run-folder.schema.json``; ``tests/runner/test_folder.py``
fails when the committed file differs. Each field's JSON type comes from its Python type, its
description and constraints from the field's metadata.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any, Final

from harn_mcp_mock.runner.budget import Usage
from harn_mcp_mock.runner.folder import (
    REPORT_FORMAT,
    RESULTS_FORMAT,
    RUN_FORMAT,
    STATE_FORMAT,
    TRIAL_FORMAT,
    RunInfo,
    SpecRef,
    TrialRecord,
)

__all__ = ["render_schema", "run_folder_schema"]


def _json_type(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a field's Python type."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        base = _json_type(inner[0]) if len(inner) == 1 else {}
        if type(None) not in args:
            return base
        if "type" in base:
            return {**base, "type": [base["type"], "null"]}
        return {"oneOf": [{"type": "null"}, base]}
    named = {str: {"type": "string"}, bool: {"type": "boolean"}, int: {"type": "integer"},
             float: {"type": "number"}, Usage: {"$ref": "#/$defs/usage"}, SpecRef: {"$ref": "#/$defs/spec"}}  # fmt: skip
    if hint in named:
        return dict(named[hint])
    origin = typing.get_origin(hint)
    if origin is list:
        return {"type": "array", "items": _json_type(args[0])}
    if origin is dict:
        value = _json_type(args[1]) if args[1] is not Any else None
        return {"type": "object", **({"additionalProperties": value} if value else {})}
    return {}


def _object_schema(
    cls: type, fields: list[dataclasses.Field[Any]], fmt: str, description: str, required: list[str]
) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {"format": {"const": fmt}, "version": {"type": "integer", "minimum": 1}}
    for f in fields:
        schema = {**_json_type(hints[f.name]), **f.metadata.get("schema", {})}
        if "$ref" in schema and len(schema) > 1 and "type" not in schema:
            schema = {"allOf": [{"$ref": schema.pop("$ref")}], **schema}
        if f.metadata.get("doc"):
            schema["description"] = f.metadata["doc"]
        properties[f.name] = schema
    return {
        "description": description,
        "type": "object",
        "required": ["format", "version", *required],
        "properties": properties,
    }


def _required(fields: list[dataclasses.Field[Any]], always: frozenset[str] = frozenset()) -> list[str]:
    missing = dataclasses.MISSING
    return [
        f.name for f in fields if (f.default is missing and f.default_factory is missing) or f.name in always
    ]


_WORLD_DOC_FIELDS: Final = {
    "world": {"type": "string"},
    "task": {"type": ["string", "null"]},
    "seed": {"type": ["integer", "null"]},
    "run_id": {"type": ["string", "null"]},
    "faults": {"type": ["string", "null"], "description": "the fault profile, or null"},
    "infra_error": {"type": ["string", "null"], "description": "why the run died: kept out of n"},
    "timed_out": {"const": True, "description": "the runner's --timeout: scored as it stood, never a pass"},
    "usage": {"$ref": "#/$defs/usage"},
    "over_budget": {"type": "string", "description": "the runner's --max-tokens/--max-cost: never a pass"},
    "usage_invalid": {"type": "string", "description": "the agent's usage was malformed: never a pass"},
    "usage_unknown": {"type": "string", "description": "a budget and no usage reported: never a pass"},
    "exit_failed": {
        "type": "string",
        "description": "--strict-exit: the agent exited non-zero: never a pass",
    },
}

_RESULTS: Final = {
    "description": "DIR/results.json: eval's JSON for every finished trial (docs/eval.md has its fields; it carries its own version). Read back typed as EvalResult (EvalResult.from_json).",
    "type": "object",
    "required": ["format", "version", "groups"],
    "properties": {
        "format": {"const": RESULTS_FORMAT},
        "version": {"type": "integer", "minimum": 1},
        "confidence": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "description": "the level of every interval (version 2 on)"},
        "groups": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["world", "tasks"],
                "properties": {
                    "tasks": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "flip_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "how often consecutive trials disagree"},
                                "interval": {"$ref": "#/$defs/interval"},
                                "usage": {"$ref": "#/$defs/spend"},
                            },
                        },
                    },
                    "pass_rate": {"type": "object", "properties": {"interval": {"$ref": "#/$defs/interval"}}},
                    "pass_power_k": {"type": "array", "items": {"type": "object", "properties": {"interval": {"$ref": "#/$defs/interval"}}}},
                    "usage": {"$ref": "#/$defs/spend"},
                },
            },
        },
        "runs": {"type": "array"},
        "excluded": {"type": "array"},
        "summary": {"type": "object"},
    },
}  # fmt: skip


def run_folder_schema() -> dict[str, Any]:
    """docs/run-folder.schema.json: the JSON Schema of the run folder's files, from the types."""
    spec_fields = list(dataclasses.fields(SpecRef))
    run_fields = [f for f in dataclasses.fields(RunInfo) if f.name not in ("version", "extra")]
    trial_fields = TrialRecord.json_fields()
    hints = typing.get_type_hints(SpecRef)
    spec = {
        "type": "object",
        "required": _required(spec_fields),
        "properties": {
            f.name: {**_json_type(hints[f.name]), **f.metadata["schema"], "description": f.metadata["doc"]}
            for f in spec_fields
        },
    }
    usage = {
        "description": "what the agent reported spending (one line per model call), summed",
        "type": "object",
        "required": ["input_tokens", "output_tokens", "cost_usd", "calls"],
        "properties": {
            "input_tokens": {"type": "integer", "minimum": 0},
            "output_tokens": {"type": "integer", "minimum": 0},
            "cost_usd": {"type": "number", "minimum": 0},
            "calls": {"type": "integer", "minimum": 0, "description": "lines summed"},
            "invalid_lines": {
                "type": "integer",
                "minimum": 0,
                "description": "lines that were not a usage record (and usage past the cap)",
            },
            "invalid": {"type": "string", "description": "the first invalid line's problem"},
        },
    }

    def world_doc(fmt: str, description: str, extra: dict[str, Any]) -> dict[str, Any]:
        return {
            "description": description,
            "type": "object",
            "required": ["format", "version", "world", "task", "seed", "run_id", "faults", "infra_error"],
            "properties": {
                "format": {"const": fmt},
                "version": {"type": "integer", "minimum": 1},
                **_WORLD_DOC_FIELDS,
                **extra,
            },
        }

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://harn.dev/schemas/run-folder.schema.json",
        "title": "harn mcp mock run: the run folder (run.json, trials/*/*/*/*/{trial,state,report}.json, results.json)",
        "description": (
            "One versioned format for the files `harn mcp mock run --out DIR` writes and `report` and "
            "`--baseline` read, generated from the types of harn_mcp_mock/runner/folder.py (RunInfo, "
            "TrialRecord, WorldReport) by `python -m harn_mcp_mock.runner.schema`. Readers keep fields "
            "they do not know; a newer version than they read is refused."
        ),
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in ("run", "trial", "world_state", "world_report", "results")],
        "$defs": {
            "safe_name": {
                "type": "string",
                "minLength": 1,
                "description": "a world name, task id or fault profile name: any non-empty string (its "
                "folder name under trials/ is made path-safe, see docs/runner.md)",
            },
            "spec": spec,
            "usage": usage,
            "run": _object_schema(RunInfo, run_fields, RUN_FORMAT, (RunInfo.__doc__ or "").strip().replace("``", "").replace("run.json", "DIR/run.json", 1), _required(run_fields)),
            "trial": _object_schema(
                TrialRecord,
                trial_fields,
                TRIAL_FORMAT,
                "DIR/trials/<world>/<task>/<profile>/<n>/trial.json: how one trial ended (written last: its presence marks the trial finished).",
                _required(trial_fields, TrialRecord._ALWAYS),
            ),
            "world_state": world_doc(
                STATE_FORMAT,
                "DIR/trials/<world>/<task>/<profile>/<n>/state.json: the world's final state, as the runner held it (WorldReport.state).",
                {"state": {"description": "the final state (absent when infra_error is set)"}},
            ),
            "world_report": world_doc(
                REPORT_FORMAT,
                "DIR/trials/<world>/<task>/<profile>/<n>/report.json: the world's report, as the runner held it (WorldReport.report; docs/eval.md).",
                {
                    "passed": {"type": "boolean"},
                    "final_state": {},
                    "forbidden_hits": {"type": "array"},
                    "faults_fired": {"type": "array"},
                    "calls": {"type": "array"},
                    "sessions": {"type": "integer", "minimum": 0, "description": "MCP sessions the agent opened"},
                    "tool_calls": {"type": "integer", "minimum": 0},
                },
            ),
            "interval": {
                "description": "[low, high] at the result's confidence: Wilson (continuity-corrected) for rates, a seeded bootstrap for pass^k (docs/eval.md); null without scored runs",
                "oneOf": [{"type": "null"}, {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "minItems": 2, "maxItems": 2}],
            },
            "spend": {
                "description": "tokens and cost the agents reported, summed over runs",
                "type": "object",
                "properties": {
                    "input_tokens": {"type": "integer", "minimum": 0},
                    "output_tokens": {"type": "integer", "minimum": 0},
                    "cost_usd": {"type": "number", "minimum": 0},
                    "runs": {"type": "integer", "minimum": 0},
                    "pass_per_dollar": {"type": ["number", "null"], "minimum": 0},
                },
            },
            "results": _RESULTS,
        },
    }  # fmt: skip


def render_schema() -> str:
    """The committed text of docs/run-folder.schema.json."""
    return json.dumps(run_folder_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_schema())
