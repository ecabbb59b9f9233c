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

import reference.model
from assignments.transformer_mt.checks.probes import reference_with_probes
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
    layout_hint: str


def _hint(part: modules.ModulePart) -> str:
    assert isinstance(part, ModulePart), part  # Part 2's checks build only Part 2's parts
    return part.layout_hint


class _Texts(modules.ModuleTexts):
    """Part 2's wording of the module checks (English, as before the catalogue)."""

    def output_name(self, cls: str) -> str:
        return f"{cls}'s output"

    def built_output_name(self, part: modules.ModulePart) -> str:
        return f"{part.cls}.{part.method}'s output"

    def parameters(self, part: modules.ModulePart, count: int, numbers: int, want_count: int, want_numbers: int) -> str:
        return (
            f"{part.cls} has {count} parameter tensors ({numbers:,} numbers); the documented "
            f"layout has {want_count} ({want_numbers:,}). {_hint(part)}"
        )

    def eval_output(self, part: modules.ModulePart, difference: float) -> str:
        return (
            f"With the expected weights loaded, {part.cls}.{part.method} in eval mode differs from "
            f"the expected output (largest difference {difference:.3g}). {_hint(part)}"
        )

    def no_context(self, part: modules.ModulePart, marker: Any) -> str:
        j = marker
        return (
            f"Changing the target at position {j} changed none of {part.cls}'s outputs at the "
            f"later positions {j + 1}.. (eval mode): later positions do not look at earlier ones, "
            "so the look-ahead property cannot be credited. The masked self-attention must let "
            "each position attend to the earlier positions."
        )

    def dropout_never(self, part: modules.ModulePart) -> str:
        return (
            f"With drop_prob=0.5, {part.cls} gives the same output in train and eval mode: "
            "dropout is never applied. Use the drop_prob argument for every dropout."
        )

    def dropout_place(self, part: modules.ModulePart) -> str:
        return (
            f"With drop_prob=1.0 in train mode, {part.cls}'s output differs from the expected "
            "one: dropout is missing, extra, or in another place. Apply each dropout to a "
            "sublayer's output before adding the residual, as in EncoderLayer."
        )

    def submodule_dropout(self, part: modules.ModulePart, name: str, class_name: str) -> str:
        return (
            f"With drop_prob=1.0 in train mode, `{name}` ({class_name}) still passes its input "
            f"through: it was not built with {part.cls}'s drop_prob. Give every sublayer that "
            "takes a dropout probability the drop_prob argument, as EncoderLayer does."
        )

    def no_gradient(self, part: modules.ModulePart, name: str) -> str:
        return (
            f"No gradient reaches `{name}`: it does not influence {part.cls}'s "
            "output. Is the sublayer used in forward, and nothing detached?"
        )

    def gradient(self, part: modules.ModulePart, name: str, difference: float) -> str:
        return f"The gradient of `{name}` differs from the expected one (largest difference {difference:.3g})."


# The reference is built with every offered probe standing in (Part 2's probes wrap the given
# classes the student's module must use).
CHECKS = modules.ModuleChecks(_Texts(), lambda cls: getattr(reference.model, cls), reference_with_probes)


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
        lambda k: (
            f"Changing the target after position {k} changed {part.cls}'s output at positions "
            f"0..{k}: a position can see the future. The target mask (trg_mask) must reach the "
            "masked self-attention."
        ),
    )
    require_context_use(ctx, part)
