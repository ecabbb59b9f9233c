"""Part 1's module checks (MultiHeadAttention, FFN, EncoderLayer, Encoder) on the shared module checks.

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
checks themselves live in autograder.checks.modules, declared per part in declared.yml, and speak
with Part 1's messages (messages/<lang>.yml): it builds, its parameters match, eval-mode outputs
reproduce the reference under transplanted weights, padded keys are ignored while the other
positions are used, dropout is applied, gradients reach every parameter and equal the reference's.
Properties earn points only with evidence of work (see `ModuleChecks.require_context_use`).
"""

from __future__ import annotations

import assignments.transformer_mt.reference.model
from assignments.attention_encoder.checks.helpers import helpers_namespace
from assignments.attention_encoder.checks.messages import t
from autograder.checks import modules
from autograder.checks.modules import Case, CasePair, ModulePart
from autograder.checks.support import expect_tensor

__all__ = ["CHECKS", "Case", "CasePair", "ModulePart", "expect_tensor"]


# Part 1's reference classes are Part 2's given code (assignments/transformer_mt/reference/model.py); the reference
# is built with the probes the student's module actually calls (a class may do a substituted class's work inline).
CHECKS = modules.ModuleChecks(
    modules.ModuleTexts(t, "ae.module", outputs_floating=True, layout_message=True),
    assignments.transformer_mt.reference.model,
    helpers_namespace,  # the probes, run afresh (with the training helpers, unused here)
    optional_probes=True,
)
