"""The student repository's public-checks step, run on the generated template as students get it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assignments.transformer_mt import build

RUNNER = ".github/autograding/run_public_checks.py"
WORKFLOW = build.STUDENT_DIR / ".github" / "workflows" / "public-checks.yml"
RENAMED = "내 과제 (최종 제출) v2.ipynb"


def student_repository(root: Path, notebook: Path | None = None) -> Path:
    """A copy of student_template/ (mtkit/, tests/, .github/ and the notebook); `notebook`, when
    given, replaces the template's notebook under a name with spaces and Hangul."""
    shutil.copytree(build.STUDENT_DIR, root, ignore=shutil.ignore_patterns("__pycache__", ".OTTER_LOG"))
    if notebook is not None:
        (root / build.MASTER.name).unlink()
        shutil.copyfile(notebook, root / RENAMED)
    return root


def run_checks_step(repo: Path) -> tuple[int, dict, dict]:
    """Run the runner as the workflow's checks step does (repository root as the working folder, no
    PYTHONPATH); returns its exit code, results.json and payloads.json."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    env.update({"NOTEBOOK": "", "OMP_WAIT_POLICY": "PASSIVE", "CUDA_VISIBLE_DEVICES": ""})
    done = subprocess.run(
        [sys.executable, RUNNER, "--tests", "tests", "--out", "public-checks", "--strict"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = repo / "public-checks"
    assert (out / "results.json").is_file(), done.stderr[-3000:]
    return (
        done.returncode,
        json.loads((out / "results.json").read_text(encoding="utf-8")),
        json.loads((out / "payloads.json").read_text(encoding="utf-8")),
    )


def test_the_workflow_runs_this_runner_from_the_repository_root() -> None:
    steps = {
        step.get("id"): step
        for step in yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["public-checks"]["steps"]
    }
    assert steps["checks"]["run"].startswith(f"python {RUNNER} --tests tests ")
    assert "working-directory" not in steps["checks"]


def test_untouched_template_has_no_setup_problem_and_fails_every_check(tmp_path: Path) -> None:
    code, results, _payloads = run_checks_step(student_repository(tmp_path / "repo"))
    assert code == 1  # --strict: unimplemented parts fail
    assert results["problems"] == [], results["problems"]  # e.g. no "No module named 'mtkit'"
    assert [c["name"] for c in results["checks"]] == ["q1", "q2", "q3", "q4", "q5"]
    assert all(
        not c["error"] and c["cases"] and not any(case["passed"] for case in c["cases"]) for c in results["checks"]
    )
    assert all("ModuleNotFoundError" not in case["message"] for c in results["checks"] for case in c["cases"])


def test_correct_notebook_under_another_name_passes_every_check(tmp_path: Path, solution_notebook: Path) -> None:
    code, results, payloads = run_checks_step(student_repository(tmp_path / "repo", solution_notebook))
    assert results["notebook"] == RENAMED
    assert results["problems"] == [], results["problems"]
    assert all(case["passed"] for c in results["checks"] for case in c["cases"]), results["checks"]
    assert code == 0
    codes = [test["test_code"] for payload in payloads.values() for test in payload["tests"]]
    assert codes and all(code.lstrip().startswith("@test_case") and "def test_q" in code for code in codes)
    assert not any(" object at 0x" in code for code in codes)


@pytest.mark.parametrize("body, expected", [("x = 1\n", "x = 1\n"), (object(), "")])
def test_case_code_is_text_or_empty(body: object, expected: str) -> None:
    from autograder.integrations.public_checks import case_code

    assert case_code(body) == expected
