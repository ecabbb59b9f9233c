"""Part 1's hidden checks through the real sandboxed worker, with the probes as its helpers source."""

from __future__ import annotations

from pathlib import Path

import pytest
from ae_suite_runner import parts, points, run_suite

from assignments.attention_encoder import training
from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS
from assignments.attention_encoder.checks.helpers import HELPERS_SOURCE
from assignments.attention_encoder.settings import training_settings
from autograder.config import load_config
from autograder.sandbox import Limits, Worker

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _grade(source: str) -> dict[str, float]:
    with Worker(source, Limits(), GRADER_GLOBALS, helpers_source=HELPERS_SOURCE) as worker:
        return points(run_suite(worker))


def test_the_notebook_solution_and_a_mutant_in_the_sandbox() -> None:
    correct = (FIXTURES / "correct.py.txt").read_text(encoding="utf-8")
    full = {name: float(part["points"]) for name, part in parts().items() if name != "training"}
    assert _grade(correct) == full
    # The unscaled attention costs the attention part only: MultiHeadAttention is checked with
    # the probe standing in for the student's ScaledDotProductAttention inside the worker.
    mutant = correct + "\n\n" + (FIXTURES / "mutants" / "attention_no_scale.py.txt").read_text(encoding="utf-8")
    got = _grade(mutant)
    assert got["attention"] < full["attention"]
    assert {k: v for k, v in got.items() if k != "attention"} == {k: v for k, v in full.items() if k != "attention"}


@pytest.mark.slow
def test_the_training_part_in_the_sandbox() -> None:
    # The worker trains with the helpers source's train_and_predict; the trusted side re-predicts.
    correct = (FIXTURES / "correct.py.txt").read_text(encoding="utf-8")
    settings = training_settings(load_config(None, {"assignment.name": "attention_encoder"}))
    limits = Limits(timeout_s=settings.time_budget_s + 30)
    with Worker(correct, limits, GRADER_GLOBALS, helpers_source=HELPERS_SOURCE) as worker:
        outcome = training.run_training_part(worker, seed=0, training=settings)
    assert outcome.passed, outcome.message
