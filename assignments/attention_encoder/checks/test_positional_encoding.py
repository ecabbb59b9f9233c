"""Hidden checks of PositionalEncoding(max_length, embedding_dim).forward(x) -> table rows (L, d).

The given code's convention (Part 2): the table is a plain tensor attribute `positional_encoding`
and forward returns its first x.size(1) rows on x's device, detached; it does not add them.
"""

from __future__ import annotations

import torch
from torch import Tensor

import assignments.attention_encoder.reference as part1
from assignments.attention_encoder.checks.cases import padded_ids
from assignments.attention_encoder.checks.messages import t
from assignments.attention_encoder.checks.module_checks import expect_tensor
from autograder.checks.support import CheckContext, fail, max_difference, require

CLASS = "PositionalEncoding"
# (max_length, embedding_dim): a long table, and a wide one.
CONFIGS = [(60, 16), (24, 32)]
# Students compute the angles in equivalent ways (pow, or exp of a log); in float32 they differ by
# a few ulp of angles up to ~60 rad, well below this.
TOLERANCE = 1e-4


def _module(ctx: CheckContext, max_length: int, dim: int) -> int:
    key = f"pe:{max_length}:{dim}"
    if key not in ctx.cache:
        require(ctx, CLASS)
        ctx.cache[key] = ctx.student.new(CLASS, [max_length, dim], seed=ctx.seed)
    handle: int = ctx.cache[key]
    return handle


def _rows(ctx: CheckContext, max_length: int, dim: int, x: Tensor) -> Tensor:
    out = ctx.student.run(_module(ctx, max_length, dim), "forward", [x], mode="eval")
    return expect_tensor(out, t("ae.module.output_name", cls=CLASS), shape=(x.size(1), dim), floating=True)


def _inputs(ctx: CheckContext, max_length: int) -> list[Tensor]:
    gen = torch.Generator().manual_seed(ctx.seed + 301)
    return [padded_ids(gen, [length] * 2, length, 20) for length in (1, 7, max_length)]


def test_pe_shape(ctx: CheckContext) -> None:
    for max_length, dim in CONFIGS:
        for x in _inputs(ctx, max_length):
            _rows(ctx, max_length, dim, x)


def _close(got: Tensor, want: Tensor) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want.double(), atol=TOLERANCE))


def test_pe_values(ctx: CheckContext) -> None:
    for max_length, dim in CONFIGS:
        want = part1.sinusoidal_table(max_length, dim)
        got = _rows(ctx, max_length, dim, _inputs(ctx, max_length)[-1])
        if _close(got, want):
            continue
        positions = torch.arange(max_length, dtype=torch.float64)
        if not torch.allclose(got[:, 0].double(), torch.sin(positions), atol=TOLERANCE):
            if torch.allclose(got[:, 0].double(), torch.cos(positions), atol=TOLERANCE):
                fail(t("ae.pe.swapped"))
            fail(t("ae.pe.column0"))
        if not torch.allclose(got[:, 1].double(), torch.cos(positions), atol=TOLERANCE):
            fail(t("ae.pe.column1"))
        # column 2: frequency 1 / 10000^(2/d); using i instead of 2i gives 1 / 10000^(1/d)
        one_step = torch.sin(positions / 10000 ** (1 / dim))
        if torch.allclose(got[:, 2].double(), one_step, atol=TOLERANCE):
            fail(t("ae.pe.exponent", dim=dim))
        row, column = (int(i) for i in ((got.double() - want.double()).abs() > TOLERANCE).nonzero()[0])
        fail(
            t(
                "ae.pe.values",
                row=row,
                column=column,
                got=f"{float(got[row, column]):.5f}",
                want=f"{float(want[row, column]):.5f}",
                dim=dim,
                difference=f"{max_difference(got, want):.3g}",
            )
        )


def test_pe_fixed(ctx: CheckContext) -> None:
    """The table is fixed: no parameters, the same rows whatever the token ids.
    Credited only when the rows are the sinusoid's first columns (a constant table is fixed for free)."""
    for max_length, dim in CONFIGS:
        handle = _module(ctx, max_length, dim)
        learned = ctx.student.params(handle)
        if learned:
            fail(t("ae.pe.parameters", names=", ".join(name for name, _ in learned)))
        first, second = _inputs(ctx, max_length)[1], _inputs(ctx, max_length)[1].flip(0) + 1
        a, b = _rows(ctx, max_length, dim, first), _rows(ctx, max_length, dim, second)
        if not _close(a, b):
            fail(t("ae.pe.depends_on_ids"))
        positions = torch.arange(first.size(1), dtype=torch.float64)
        if not (
            torch.allclose(a[:, 0].double(), torch.sin(positions), atol=TOLERANCE)
            and torch.allclose(a[:, 1].double(), torch.cos(positions), atol=TOLERANCE)
        ):
            fail(t("ae.pe.not_sinusoid"))
