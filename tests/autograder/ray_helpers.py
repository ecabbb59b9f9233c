"""Shared pieces of the Ray executor tests: a small real batch and its local-executor scores."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

from autograder.assignment import load_assignment
from autograder.batch import expand_paths, grade_all
from autograder.config import load_config
from autograder.engine import grade_submission as engine_grade_submission
from autograder.executors.local import LocalExecutor
from autograder.grading import Submission

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "soundness" / "corpus"
NOTEBOOKS = ["alt_mask_bool", "mask_transposed", "mask_upper_triangle", "mask_padding_ignored"]
PARTS = ["look_ahead_mask"]  # unit parts only, one of them: a grading is seconds


def small_batch(folder: Path) -> list[Submission]:
    """Copies of a few corpus notebooks (cheap unit-part gradings with different scores)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in NOTEBOOKS:
        shutil.copy(CORPUS / f"{name}.ipynb", folder / f"{name}.ipynb")
    return expand_paths([folder])


def scores(results) -> dict[str, tuple[str, float, dict[str, float]]]:
    """label -> (status, points, points per check)."""
    return {
        r.submission: (r.status, r.points, {c.check_id: c.points for p in r.parts for c in p.checks}) for r in results
    }


def local_scores(submissions: list[Submission]) -> dict:
    """The local executor's scores of the batch (two worker processes)."""
    return scores(grade_all(submissions, load_config(), grade_submission, PARTS, executor=LocalExecutor(2)))
