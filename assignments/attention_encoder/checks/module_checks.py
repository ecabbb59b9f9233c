"""Part 1's module checks (MultiHeadAttention, FFN, EncoderLayer, Encoder) on the shared module checks.

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
checks themselves live in autograder.checks.modules and speak with Part 1's messages
(messages/<lang>.yml): it builds, its parameters match, eval-mode outputs reproduce the reference
under transplanted weights, padded keys are ignored while the other positions are used, dropout
is applied, gradients reach every parameter and equal the reference's. Properties earn points
only with evidence of work (see `require_context_use`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

import reference.transformer_mt.model
from assignments.attention_encoder.checks.messages import t
from assignments.attention_encoder.checks.probes import probe_namespace
from autograder.checks import modules
from autograder.checks.modules import Case
from autograder.checks.support import CheckContext, expect_tensor

__all__ = ["CHECKS", "Case", "ModulePart", "PaddingPair", "check_padding", "expect_tensor", "require_context_use"]

# (before, after, positions): cases that differ only where the mask hides keys; the outputs at
# `positions` (along dim 1) must not change.
PaddingPair = tuple[Case, Case, list[int]]


@dataclass(kw_only=True)
class ModulePart(modules.ModulePart):
    """How to build and feed one graded module class of Part 1."""

    layout_key: str  # message key of the layout hint
    padding_pair: Callable[[torch.Generator], PaddingPair] | None = None
    # (before, after, j): cases equal except at a visible position j; a module doing its work
    # changes some output at another position.
    context_change: Callable[[torch.Generator], tuple[Case, Case, int]] | None = None


class _Texts(modules.ModuleTexts):
    """Part 1's wording of the module checks (messages/<lang>.yml, keys ae.module.*)."""

    outputs_floating = True

    def hint(self, part: modules.ModulePart) -> str:
        assert isinstance(part, ModulePart), part  # Part 1's checks build only Part 1's parts
        return t(part.layout_key)

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


def require_context_use(ctx: CheckContext, part: ModulePart) -> None:
    """Fail unless an output depends on the input at another (visible) position (eval mode).

    A module that returns its input, or works position by position, ignores padded keys for free;
    the padding property is only credited once positions do look at each other.
    """
    if part.context_change is not None:
        CHECKS.require_context_use(
            ctx, part, part.context_change, lambda j, length: [i for i in range(length) if i != j]
        )


def check_padding(ctx: CheckContext, part: ModulePart) -> None:
    """Changing what sits at masked (padding) key positions never changes the outputs at the
    other positions, and outputs do depend on other visible positions (not vacuous)."""
    if part.padding_pair is None:
        raise RuntimeError(f"{part.cls} has no padding cases")

    def leak(_marker: Any) -> str:  # asked only once the outputs do change
        return CHECKS.deviation_shown(ctx, part) or t("ae.module.padding_leaks", cls=part.cls)

    CHECKS.check_unchanged(ctx, part, part.padding_pair, lambda positions: positions, leak)
    require_context_use(ctx, part)
