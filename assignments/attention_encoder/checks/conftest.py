"""Fixtures of Part 1's hidden checks: the student side (worker, or the reference when run alone)."""

from __future__ import annotations

import pytest

from autograder.checks.support import CheckContext

CONTEXT_PLUGIN = "autograder-check-context"  # the engine registers its context plugin by this name

# The module globals the notebook's given code reads (create_padding_mask_for_attention reads
# `device`); the engine injects the same ones into the worker.
GRADER_GLOBALS = {"device": "cpu", "unk_idx": 0, "sos_idx": 1, "eos_idx": 2, "pad_idx": 3}


@pytest.fixture(scope="session")
def ctx(request: pytest.FixtureRequest) -> CheckContext:
    """The grading context: set by the engine's plugin, else the reference grading itself."""
    plugin = request.config.pluginmanager.get_plugin(CONTEXT_PLUGIN)
    if plugin is not None:
        context: CheckContext = plugin.context
        return context
    from assignments.attention_encoder.checks.reference_student import ReferenceStudent

    return CheckContext(student=ReferenceStudent(GRADER_GLOBALS), seed=0)
