"""The instructor workflow grades student code in a jail: the root jail under sudo, never the weak fallback."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "instructor-batch-grade.yml"


def _step(job: str, step_id: str) -> str:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return next(s for s in workflow["jobs"][job]["steps"] if s.get("id") == step_id)["run"]


def test_the_grade_step_runs_the_root_jail_and_refuses_anything_weaker():
    run = _step("grade", "grade")
    assert "sudo " in run and "python -m autograder grade" in run and "--isolation namespace" in run
    assert "weak" not in run


def test_the_training_step_never_asks_for_weak_isolation():
    run = _step("train", "train")
    assert "sudo" in run and "weak" not in run
