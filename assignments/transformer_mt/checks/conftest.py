"""Fixtures of the hidden checks: the student side (worker, or the reference when run alone)."""

from __future__ import annotations

import pytest

from autograder.checks.support import CheckContext, check_context


@pytest.fixture(scope="session")
def ctx(request: pytest.FixtureRequest) -> CheckContext:
    """The grading context: set by the engine's plugin, else the reference grading itself."""
    return check_context(request, "transformer_mt")
