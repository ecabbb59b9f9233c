"""The whole-submission time budget: restarts replaying slow top-level code cannot make a submission take minutes."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.engine import grade_submission as engine_grade_submission
from autograder.i18n import t, use_language

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

NOTEBOOK = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks" / "slow_top_level.py"


def test_parts_not_reached_in_the_budget_score_zero_and_say_so():
    # Each load of the fixture takes >= 6 s (two 3 s sleeps), so the restart the loss part needs
    # ends past 10 s however fast the machine: the loss part is cut by the budget, never reached.
    budget = 10
    config = load_config(
        None, {"grading.submission_budget_s": budget, "worker.timeout_s": 30, "feedback.language": "en"}
    )
    result = grade_submission(NOTEBOOK, config, parts=["look_ahead_mask", "masked_loss"])
    # unbounded, this takes a worker start plus two or three 6 s loads (one per crash): 14-40 s
    assert result.grading_seconds < budget + 8
    with use_language("en"):
        message = t("engine.budget_spent", budget=budget)
    parts = {p.part: p for p in result.parts}
    assert parts["look_ahead_mask"].points == 0 and parts["masked_loss"].points == 0
    assert message in parts["masked_loss"].messages  # the last part is never reached
    for part in (parts["look_ahead_mask"], parts["masked_loss"]):  # a crash, or cut by the budget
        assert all(m == message or "could not be run to the end" in m for m in part.messages), part.messages


def test_the_budget_has_a_default_and_can_be_switched_off():
    assert load_config().grading.submission_budget_s > 0
    assert load_config(None, {"grading.submission_budget_s": 0}).grading.submission_budget_s == 0
