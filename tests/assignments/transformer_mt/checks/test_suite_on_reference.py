"""With no submission, the hidden suite grades the reference itself: every check passes."""

from __future__ import annotations

from assignments.transformer_mt.assignment import ASSIGNMENT
from assignments.transformer_mt.checks.reference_student import ReferenceStudent
from autograder.checks.support import CheckContext
from autograder.config import load_config
from autograder.runner import run_checks

GRADER_GLOBALS = dict(ASSIGNMENT.grader_globals)  # Part 2's (assignment.yml `grader_globals`)


def test_every_configured_check_exists_and_passes_on_the_reference() -> None:
    config = load_config()
    configured = [c for name, part in config.parts.items() if name != "training" for c in part.checks]
    verdicts = run_checks(ASSIGNMENT.checks_dir, CheckContext(student=ReferenceStudent(dict(GRADER_GLOBALS)), seed=0))
    assert sorted(verdicts) == sorted(configured), "grader.yml and the suite disagree on check ids"
    failed = {c: v.message or v.internal_error for c, v in verdicts.items() if not v.passed}
    assert failed == {}


def test_the_suite_passes_for_other_seeds_too() -> None:
    verdicts = run_checks(
        ASSIGNMENT.checks_dir, CheckContext(student=ReferenceStudent(dict(GRADER_GLOBALS)), seed=12345)
    )
    assert all(v.passed for v in verdicts.values()), {c: v.message for c, v in verdicts.items()}
