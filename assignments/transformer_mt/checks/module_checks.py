"""Part 2's module checks (DecoderLayer, Decoder, Transformer.forward) on the shared module checks.

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
checks themselves live in autograder.checks.modules, worded here: it builds, its parameters
match, eval-mode outputs reproduce the reference under transplanted weights, it is causal,
dropout is applied, gradients reach every parameter and equal the reference's.
"""

from __future__ import annotations

from typing import Any

import reference.transformer_mt.model
from assignments.transformer_mt.checks.probes import probe_namespace
from assignments.transformer_mt.messages import t
from autograder.checks import modules
from autograder.checks.modules import Case, ModulePart

__all__ = ["CHECKS", "Case", "ModulePart"]


class _Texts(modules.ModuleTexts):
    """Part 2's wording of the module checks: `checks.module.*` of its catalogue."""

    def built_output_name(self, part: modules.ModulePart) -> str:
        return t("checks.module.output_name", cls=f"{part.cls}.{part.method}")

    def eval_output(self, part: modules.ModulePart, difference: float) -> str:
        cls = f"{part.cls}.{part.method}"
        return t("checks.module.eval_output", cls=cls, difference=f"{difference:.3g}", hint=self.hint(part))

    def no_context(self, part: modules.ModulePart, marker: Any) -> str:
        return t("checks.module.no_context", cls=part.cls, j=marker, later=marker + 1)


# The reference is built with every offered probe standing in (Part 2's probes wrap the given
# classes the student's module must use).
CHECKS = modules.ModuleChecks(_Texts(t, "checks.module"), reference.transformer_mt.model, probe_namespace)
