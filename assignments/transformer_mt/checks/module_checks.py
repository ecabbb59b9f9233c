"""Part 2's module checks (DecoderLayer, Decoder, Transformer.forward) on the shared module checks.

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
checks themselves live in autograder.checks.modules, worded here: it builds, its parameters
match, eval-mode outputs reproduce the reference under transplanted weights, it is causal,
dropout is applied, gradients reach every parameter and equal the reference's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

import reference.transformer_mt.model
from assignments.transformer_mt.checks.probes import probe_namespace
from assignments.transformer_mt.messages import t
from autograder.checks import modules
from autograder.checks.modules import Case
from autograder.checks.support import CheckContext

__all__ = ["CHECKS", "Case", "ModulePart", "check_causal", "require_context_use"]


@dataclass(kw_only=True)
class ModulePart(modules.ModulePart):
    """How to build and feed one graded module class of Part 2."""

    causal_pair: Callable[[torch.Generator], tuple[Case, Case, int]]  # equal up to position k
    # Cases equal except at position j (returned third): a part doing its work changes some
    # output after j. Causality earns nothing when later outputs ignore earlier inputs.
    earlier_change: Callable[[torch.Generator], tuple[Case, Case, int]]
    layout_hint_key: str  # the catalogue key of the documented layout, ending structural messages


class _Texts(modules.ModuleTexts):
    """Part 2's wording of the module checks: `checks.module.*` of its catalogue."""

    def built_output_name(self, part: modules.ModulePart) -> str:
        return t("checks.module.output_name", cls=f"{part.cls}.{part.method}")

    def hint(self, part: modules.ModulePart) -> str:
        assert isinstance(part, ModulePart), part  # Part 2's checks build only Part 2's parts
        return t(part.layout_hint_key)

    def eval_output(self, part: modules.ModulePart, difference: float) -> str:
        cls = f"{part.cls}.{part.method}"
        return t("checks.module.eval_output", cls=cls, difference=f"{difference:.3g}", hint=self.hint(part))

    def no_context(self, part: modules.ModulePart, marker: Any) -> str:
        return t("checks.module.no_context", cls=part.cls, j=marker, later=marker + 1)


# The reference is built with every offered probe standing in (Part 2's probes wrap the given
# classes the student's module must use).
CHECKS = modules.ModuleChecks(_Texts(t, "checks.module"), reference.transformer_mt.model, probe_namespace)


def require_context_use(ctx: CheckContext, part: ModulePart) -> None:
    """Fail unless later outputs depend on earlier inputs (eval mode).

    A module that returns its input, or anything computed position by position, is causal for
    free; properties about what a position may see are only credited once positions do see
    something. Cached per run (the causal and routing checks share it).
    """
    CHECKS.require_context_use(ctx, part, part.earlier_change, lambda j, length: list(range(j + 1, length)))


def check_causal(ctx: CheckContext, part: ModulePart) -> None:
    """Changing inputs after position k never changes outputs at positions <= k (eval mode),
    and later outputs do depend on earlier inputs (so the property is not vacuous)."""
    CHECKS.check_unchanged(
        ctx,
        part,
        part.causal_pair,
        lambda k: list(range(k + 1)),
        lambda k: t("checks.module.sees_future", cls=part.cls, k=k),
    )
    require_context_use(ctx, part)
