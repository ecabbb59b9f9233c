"""Part 1's module checks (MultiHeadAttention, FFN, EncoderLayer, Encoder) on the shared module checks.

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
checks themselves live in autograder.checks.modules, declared per part in declared.yml, and speak
with Part 1's messages (messages/<lang>.yml): it builds, its parameters match, eval-mode outputs
reproduce the reference under transplanted weights, padded keys are ignored while the other
positions are used, dropout is applied, gradients reach every parameter and equal the reference's.
Properties earn points only with evidence of work (see `ModuleChecks.require_context_use`).
"""

from __future__ import annotations

from typing import Any

import reference.transformer_mt.model
from assignments.attention_encoder.checks.messages import t
from assignments.attention_encoder.checks.probes import probe_namespace
from autograder.checks import modules
from autograder.checks.modules import Case, CasePair, ModulePart
from autograder.checks.support import expect_tensor

__all__ = ["CHECKS", "Case", "CasePair", "ModulePart", "expect_tensor"]


class _Texts(modules.ModuleTexts):
    """Part 1's wording of the module checks (messages/<lang>.yml, keys ae.module.*)."""

    outputs_floating = True

    def layout(self, part: modules.ModulePart) -> str | None:
        return t("ae.module.layout", cls=part.cls, hint=self.hint(part))

    def eval_output(self, part: modules.ModulePart, difference: float) -> str:
        return t("ae.module.eval_output", cls=part.cls, difference=f"{difference:.3g}", hint=self.hint(part))

    def no_context(self, part: modules.ModulePart, marker: Any) -> str:
        return t("ae.module.no_context", cls=part.cls, j=marker)


# Part 1's reference classes are Part 2's given code (reference.transformer_mt.model); the reference is built
# with the probes the student's module actually calls (a class may do a substituted class's work inline).
CHECKS = modules.ModuleChecks(
    _Texts(t, "ae.module"), reference.transformer_mt.model, probe_namespace, optional_probes=True
)
