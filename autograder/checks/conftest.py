"""Fixtures of the hidden checks: the student side (worker, or the reference when run alone)."""

from __future__ import annotations

import pytest

from autograder.checks.support import CheckContext
from mtkit.constants import EOS_IDX, PAD_IDX, SOS_IDX, SRC_LANGUAGE, TGT_LANGUAGE, UNK_IDX

CONTEXT_PLUGIN = "autograder-check-context"

# The module globals the original template's functions read; the engine injects the same ones.
GRADER_GLOBALS = {
    "device": "cpu",
    "src_language": SRC_LANGUAGE,
    "tgt_language": TGT_LANGUAGE,
    "unk_idx": UNK_IDX,
    "sos_idx": SOS_IDX,
    "eos_idx": EOS_IDX,
    "pad_idx": PAD_IDX,
    "vocab_size": {SRC_LANGUAGE: 29, TGT_LANGUAGE: 23},
}


@pytest.fixture(scope="session")
def ctx(request: pytest.FixtureRequest) -> CheckContext:
    """The grading context: set by the engine's plugin, else the reference grading itself."""
    plugin = request.config.pluginmanager.get_plugin(CONTEXT_PLUGIN)
    if plugin is not None:
        context: CheckContext = plugin.context
        return context
    from autograder.checks.reference_student import ReferenceStudent

    return CheckContext(student=ReferenceStudent(GRADER_GLOBALS), seed=0)
