"""Fixtures of Part 1's hidden checks: the student side (worker, or the reference when run alone)."""

from __future__ import annotations

import pytest

from autograder.checks.support import CheckContext, check_context

# The module globals the notebook's given code reads (create_padding_mask_for_attention reads
# `device`); the engine injects the same ones into the worker (assignment.py's grader_globals).
GRADER_GLOBALS = {"device": "cpu", "unk_idx": 0, "sos_idx": 1, "eos_idx": 2, "pad_idx": 3}


@pytest.fixture(scope="session")
def ctx(request: pytest.FixtureRequest) -> CheckContext:
    """The grading context: set by the engine's plugin, else the reference grading itself."""
    return check_context(request, "attention_encoder")
