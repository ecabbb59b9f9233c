"""Hidden checks of FeedForwardNeuralNetwork(embedding_dim, feed_forward_dim, drop_prob).forward(x)."""

from __future__ import annotations

from typing import Any

import torch

from assignments.attention_encoder.checks import module_checks as mc
from assignments.attention_encoder.checks.messages import t
from autograder.checks.declared import declared_checks
from autograder.checks.support import CheckContext, all_close, fail

D_MODEL, FF_DIM = 16, 32


def _cases(gen: torch.Generator) -> list[list[Any]]:
    return [[torch.randn(2, 5, D_MODEL, generator=gen)], [torch.randn(3, 1, D_MODEL, generator=gen) * 2]]


PART = mc.ModulePart(
    cls="FeedForwardNeuralNetwork",
    ctor_args=lambda p: [D_MODEL, FF_DIM, p],
    make_cases=_cases,
    output_shape=lambda case: tuple(case[0].shape),
    layout_key="ae.layout.feed_forward",
)


def test_ffn_position_wise(ctx: CheckContext) -> None:
    """Each position is transformed on its own: changing one position changes only its output.
    Credited only when the block is not affine (a ReLU between W1 and W2): returning the input,
    a constant or one linear map is position-wise for free."""
    handle = mc.CHECKS.student_module(ctx, PART, PART.drop_prob)
    gen = torch.Generator().manual_seed(ctx.seed + 29)
    x = torch.randn(2, 6, D_MODEL, generator=gen)
    changed = x.clone()
    changed[:, 3] = torch.randn(2, D_MODEL, generator=gen) * 2
    out, out_changed, doubled, at_zero = (
        mc.expect_tensor(mc.CHECKS.run(ctx, PART, handle, [value], "eval"), t("ae.module.output_name", cls=PART.cls))
        for value in (x, changed, 2 * x, torch.zeros_like(x))
    )
    others = [0, 1, 2, 4, 5]
    if out.shape != out_changed.shape or not all_close(out[:, others], out_changed[:, others]):
        fail(t("ae.ffn.mixes_positions"))
    if all_close(doubled - at_zero, 2 * (out - at_zero)):
        fail(t("ae.ffn.affine"))


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "feed_forward"))
