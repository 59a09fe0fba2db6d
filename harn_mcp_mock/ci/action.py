"""The GitHub Action's logic (``action.yml`` runs ``python -m harn_mcp_mock.ci.action``): lint the
cassettes, verify each against a live server command or a candidate, write the reports, the
step summary, the outputs and one self-updating pull-request comment with the drift table.

Inputs come as environment variables (``INPUT_CASSETTES``, ``INPUT_VERIFY_COMMAND``,
``INPUT_CANDIDATE``, ``INPUT_LINT``, ``INPUT_FAIL_ON``, ``INPUT_SARIF``, ``INPUT_COMMENT``,
``INPUT_GITHUB_TOKEN``), so the same run happens on a laptop or in a test with the same inputs.
The exit code is 1 when a finding is at or above ``fail-on``, 2 for bad inputs; ``action.yml``
uploads the SARIF file first and then fails the step with it.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["COMMENT_MARKER", "ActionInputs", "main", "run_action"]

COMMENT_MARKER = "<!-- harn-mcp-mock -->"


@dataclass(slots=True)
class ActionInputs:
    cassettes: list[str] = field(default_factory=list)
    verify_command: list[str] = field(default_factory=list)
    candidate: str | None = None
    lint: bool = True
    fail_on: str = "ERR"
    sarif: bool = False
    comment: bool = True
    token: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionInputs:
        from harn_mcp_mock.errors import UsageError

        def flag(name: str, default: bool) -> bool:
            raw = env.get(f"INPUT_{name}", "").strip().lower()
            if not raw:
                return default
            if raw not in ("true", "false"):
                raise UsageError(f"input {name.lower().replace('_', '-')} must be true or false, not {raw!r}")
            return raw == "true"

        fail_on = (env.get("INPUT_FAIL_ON") or "ERR").strip().upper()
        if fail_on not in ("ERR", "WARN", "INFO"):
            raise UsageError(f"input fail-on must be ERR, WARN or INFO, not {fail_on!r}")
        command = env.get("INPUT_VERIFY_COMMAND", "").strip()
        candidate = env.get("INPUT_CANDIDATE", "").strip() or None
        if command and candidate:
            raise UsageError("give verify-command or candidate, not both")
        return cls(
            cassettes=shlex.split(env.get("INPUT_CASSETTES", "")),
            verify_command=shlex.split(command),
            candidate=candidate,
            lint=flag("LINT", True),
            fail_on=fail_on,
            sarif=flag("SARIF", False),
            comment=flag("COMMENT", True),
            token=env.get("INPUT_GITHUB_TOKEN") or None,
        )


@dataclass(slots=True)
class Outcome:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("ERR", "WARN", "INFO"), 0))
    outputs: dict[str, str] = field(default_factory=dict)
    markdown: list[str] = field(default_factory=list)
    failed: bool = False


def _write_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as fh:
        for key, value in outputs.items():
            fh.write(f"{key}={value}\n")


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


def run_action(env: Mapping[str, str], *, cwd: Path | None = None) -> int:
    """One run of the action with ``env`` as its environment; returns its exit code."""
    from harn_mcp_mock.errors import HarnError
    from harn_mcp_mock.findings.model import Severity
    from harn_mcp_mock.lint import find_cassettes, lint_paths, load_config, read_usage, render_lint
    from harn_mcp_mock.lint.usage import USAGE_FILE
    from harn_mcp_mock.verify.report import github_step_summary, render
    from harn_mcp_mock.verify.run import verify

    root = (cwd or Path.cwd()).resolve()
    try:
        inputs = ActionInputs.from_env(env)
    except HarnError as exc:
        print(f"::error title=harn-mcp-mock::{exc}")
        return 2
    out_dir = Path(env.get("RUNNER_TEMP") or root) / "harn-mcp-mock"
    out_dir.mkdir(parents=True, exist_ok=True)
    fail_on = Severity[inputs.fail_on]
    outcome = Outcome()
    try:
        cassettes = find_cassettes(inputs.cassettes, root)
    except HarnError as exc:
        print(f"::error title=harn-mcp-mock::{exc}")
        return 2
    if inputs.lint:
        config = load_config(root)
        config.fail_on = fail_on
        result = lint_paths(
            inputs.cassettes, config, root=root, used=read_usage(root / ".pytest_cache" / USAGE_FILE)
        )
        (out_dir / "lint.json").write_text(render_lint(result, "json", fail_on), encoding="utf-8")
        outcome.outputs["lint-report"] = str(out_dir / "lint.json")
        sys.stdout.write(render_lint(result, "github", fail_on))
        if inputs.sarif:
            (out_dir / "lint.sarif").write_text(render_lint(result, "sarif", fail_on), encoding="utf-8")
            outcome.outputs["sarif-file"] = str(out_dir / "lint.sarif")
        for name, n in result.counts().items():
            outcome.counts[name] += n
        outcome.failed |= bool(result.exit_code(fail_on))
        counts = result.counts()
        outcome.markdown.append(
            f"**lint**: {len(result.files)} cassette(s), {counts['ERR']} ERR, {counts['WARN']} WARN, "
            f"{counts['INFO']} INFO\n"
        )
    if inputs.verify_command or inputs.candidate:
        reports = []
        rows = ["| cassette | ERR | WARN | INFO | result |", "|---|---|---|---|---|"]
        for cassette in cassettes:
            shown = (
                str(cassette.resolve().relative_to(root))
                if cassette.resolve().is_relative_to(root)
                else str(cassette)
            )
            try:
                verified = verify(
                    cassette,
                    candidate=inputs.candidate,
                    command=inputs.verify_command or None,
                    on_event=lambda text: print(f"harn mcp mock verify: {text}"),
                )
            except HarnError as exc:
                print(f"::error file={shown},title=harn-mcp-mock verify::{exc}")
                rows.append(f"| `{shown}` | - | - | - | could not compare |")
                outcome.failed = True
                continue
            counts = verified.counts()
            for name, n in counts.items():
                outcome.counts[name] += n
            failed = bool(verified.exit_code(fail_on))
            outcome.failed |= failed
            rows.append(
                f"| `{shown}` | {counts['ERR']} | {counts['WARN']} | {counts['INFO']} | {'drift' if failed else 'ok'} |"
            )
            reports.append(json.loads(render(verified, "json", fail_on=fail_on)))
            sys.stdout.write(render(verified, "github", fail_on=fail_on))
            if verified.findings:
                _append(env.get("GITHUB_STEP_SUMMARY"), github_step_summary(verified, fail_on))
        (out_dir / "verify.json").write_text(json.dumps(reports, indent=2), encoding="utf-8")
        outcome.outputs["verify-report"] = str(out_dir / "verify.json")
        outcome.markdown.append("**verify** (drift against the recordings)\n\n" + "\n".join(rows) + "\n")
    outcome.outputs.update({"err": str(outcome.counts["ERR"]), "warn": str(outcome.counts["WARN"]),
                            "info": str(outcome.counts["INFO"])})  # fmt: skip
    code = 1 if outcome.failed else 0
    outcome.outputs["exit-code"] = str(code)
    verdict = "fails" if code else "passes"
    body = f"{COMMENT_MARKER}\n### harn-mcp-mock {verdict} (fail-on {inputs.fail_on})\n\n" + "\n".join(
        outcome.markdown
    )
    _append(env.get("GITHUB_STEP_SUMMARY"), body.replace(COMMENT_MARKER + "\n", "") + "\n")
    _write_outputs(env, outcome.outputs)
    if inputs.comment:
        comment_on_pull_request(env, inputs.token, body)
    return code


def _pull_number(env: Mapping[str, str]) -> int | None:
    if env.get("GITHUB_EVENT_NAME") not in ("pull_request", "pull_request_target"):
        return None
    try:
        event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
        return int(event["pull_request"]["number"])
    except (KeyError, OSError, ValueError, TypeError):
        return None


def _api(method: str, url: str, token: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def comment_on_pull_request(env: Mapping[str, str], token: str | None, body: str) -> str | None:
    """Create or update the one comment of ours on the pull request; ``"created"``, ``"updated"``
    or None (not a pull request, no token, or the API refused: the run itself is not failed)."""
    number = _pull_number(env)
    repo = env.get("GITHUB_REPOSITORY")
    if number is None or not token or not repo:
        return None
    base = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    comments = f"{base}/repos/{repo}/issues/{number}/comments"
    try:
        page = 1
        while True:
            listed = _api("GET", f"{comments}?per_page=100&page={page}", token)
            mine = next((c for c in listed or () if COMMENT_MARKER in str(c.get("body", ""))), None)
            if mine is not None:
                _api("PATCH", f"{base}/repos/{repo}/issues/comments/{mine['id']}", token, {"body": body})
                return "updated"
            if not listed or len(listed) < 100:
                break
            page += 1
        _api("POST", comments, token, {"body": body})
        return "created"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(f"::warning title=harn-mcp-mock::could not comment on the pull request: {exc}")
        return None


def main() -> None:
    raise SystemExit(run_action(os.environ))


if __name__ == "__main__":
    main()
