"""The workflows pass the structural linter; the student side holds nothing secret and no hidden check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from workflow_tools import INSTRUCTOR_WORKFLOW, ROOT, STUDENT_WORKFLOW, lint_workflow, load_workflow

import assignments.build as template_build
from autograder.assignment import load_assignment
from autograder.assignment_folder import available_assignments
from autograder.config import load_config
from autograder.integrations import student_bundle
from autograder.integrations.public_checks import provided_globals

STUDENT_GITHUB = ROOT / "student_template" / ".github"


def test_both_workflows_pass_the_linter() -> None:
    assert lint_workflow(STUDENT_WORKFLOW) == []
    assert lint_workflow(INSTRUCTOR_WORKFLOW) == []


def test_linter_catches_planted_mistakes(tmp_path: Path) -> None:
    text = STUDENT_WORKFLOW.read_text(encoding="utf-8")
    broken = (
        text.replace("steps.checks.outputs.runners", "steps.chekcs.outputs.runners")
        .replace("actions/checkout@v4", "actions/checkout")
        .replace("needs: public-checks", "needs: public-check")
        .replace("--out public-checks --strict", "--out public-checks --strict ${{ inputs.x }}")
        .replace("printf '%s\\n' \"$REPORTER_ENV\"", "printf '%s\\n' \"$REPORTER_ENV\" (")
        .replace("timeout-minutes: 20", "timeout-minutes: 20\n    runs_on: typo")
    )
    path = tmp_path / "broken.yml"
    path.write_text(broken, encoding="utf-8")
    problems = "\n".join(lint_workflow(path))
    for expected in [
        "steps.chekcs is not an earlier step",
        "not pinned to a ref",
        "needs unknown job 'public-check'",
        "inside run:",
        "bash -n",
        "unknown key 'runs_on'",
    ]:
        assert expected in problems, (expected, problems)


def test_student_workflow_runs_on_push_with_python_311_pip_cache_and_cpu_torch_first() -> None:
    workflow = load_workflow(STUDENT_WORKFLOW)
    assert "push" in workflow["on"]
    steps = workflow["jobs"]["public-checks"]["steps"]
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version"] == "3.11" and setup["with"]["cache"] == "pip"
    install = next(s for s in steps if s.get("id") == "install")["run"]
    assert install.index("download.pytorch.org/whl/cpu") < install.index("pip install -r")
    assert workflow["permissions"] == {"contents": "read"}


def test_student_side_holds_no_secret_and_no_hidden_check() -> None:
    files = [p for p in STUDENT_GITHUB.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    workflows = "\n".join(p.read_text(encoding="utf-8") for p in files if p.suffix in {".yml", ".yaml"})
    assert "secrets." not in workflows and "GITHUB_TOKEN" not in workflows
    assert not re.search(
        r"^\s*(from|import)\s+(reference|assignments|autograder\.checks|autograder\.engine)\b", text, re.M
    )
    hidden_ids = [check for part in load_config().parts.values() for check in part.checks]
    assert [c for c in hidden_ids if c in text] == []
    names = {p.relative_to(STUDENT_GITHUB).as_posix() for p in files}
    assert not any(
        name.startswith(("autograding/reference", "autograding/assignments", "autograding/autograder/checks"))
        for name in names
    )


def test_vendored_public_bundle_is_up_to_date() -> None:
    assert student_bundle.stale_files() == [], "run: python -m autograder.integrations.student_bundle --write"


@pytest.mark.parametrize("name", available_assignments())
def test_public_checks_use_the_globals_the_grader_provides(name: str) -> None:
    # The template ships each assignment's own globals beside its public tests (no assignment's
    # values in the public-check runner itself).
    tests_dir = template_build.target(name).student_dir / "tests"
    provided = {key: str(value) if key == "device" else value for key, value in provided_globals(tests_dir).items()}
    assert provided == dict(load_assignment(name).grader_globals)


def test_instructor_workflow_is_marked_as_a_private_template_and_uses_hidden_checks() -> None:
    header = INSTRUCTOR_WORKFLOW.read_text(encoding="utf-8").split("\nname:", 1)[0]
    assert "TEMPLATE" in header and "PRIVATE" in header and "never" in header
    workflow = load_workflow(INSTRUCTOR_WORKFLOW)
    assert {"deadline", "repos-file", "jobs", "train", "training-runner"} <= set(
        workflow["on"]["workflow_dispatch"]["inputs"]
    )
    grade = next(s for s in workflow["jobs"]["grade"]["steps"] if s.get("id") == "grade")["run"]
    assert "python -m autograder grade" in grade and '--jobs "$JOBS"' in grade
    assert "fromJSON(inputs.training-runner)" in workflow["jobs"]["train"]["runs-on"]


def test_workflows_are_plain_yaml_without_tabs() -> None:
    for path in (STUDENT_WORKFLOW, INSTRUCTOR_WORKFLOW):
        text = path.read_text(encoding="utf-8")
        assert "\t" not in text
        yaml.safe_load(text)
