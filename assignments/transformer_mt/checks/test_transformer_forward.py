"""Hidden checks of part 4: Transformer.forward(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask).

The student's Transformer is built with a probe standing in for Decoder, so these checks grade
forward's own work — encode the source under its padding mask, decode the full target with the
encoder output and the right mask in each place — whatever the state of the student's Decoder.
"""

from __future__ import annotations

from typing import Any

import torch

from assignments.transformer_mt.checks import module_checks as mc
from assignments.transformer_mt.checks.token_batches import later_tokens_redrawn, masked_batches, token_changed
from assignments.transformer_mt.messages import t
from assignments.transformer_mt.reference import variants
from autograder.checks.declared import declared_checks
from autograder.checks.support import CheckContext, all_close, expect_tensor, fail

SRC_VOCAB, TGT_VOCAB, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS = 29, 23, 20, 16, 32, 4, 2
VOCAB_SIZES = {"de": SRC_VOCAB, "en": TGT_VOCAB}


def _case(gen: torch.Generator, batch: int, length: int, ragged: bool = True) -> list[Any]:
    return list(masked_batches(gen, batch, length, SRC_VOCAB, TGT_VOCAB, ragged))


def _cases(gen: torch.Generator) -> list[Any]:
    return [_case(gen, 2, 6), _case(gen, 3, 1), _case(gen, 4, 10)]


PART = mc.ModulePart(
    cls="Transformer",
    method="forward",
    ctor_args=lambda p: [dict(VOCAB_SIZES), MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS, p],
    make_cases=_cases,
    output_shape=lambda case: (*case[1].shape, TGT_VOCAB),
    causal_pair=lambda gen: later_tokens_redrawn(_case(gen, 3, 9, ragged=False), 1, TGT_VOCAB, gen),
    context_change=lambda gen: token_changed(_case(gen, 3, 8, ragged=False), 1, TGT_VOCAB, gen),
    substitute={"Decoder": "ProbeDecoder"},
    set_globals={"vocab_size": dict(VOCAB_SIZES)},
    layout_key="checks.layout.transformer",
    deviations={"log_softmax_output": variants.log_softmax_output, "swapped_masks": variants.swapped_masks},
)


def test_transformer_mask_routing(ctx: CheckContext) -> None:
    """Source positions the padding mask hides must not matter, whatever tokens they hold; the
    visible source and the earlier target positions must (else the property is vacuous)."""
    handle = mc.CHECKS.student_module(ctx, PART, PART.drop_prob)
    gen = torch.Generator().manual_seed(ctx.seed + 17)
    for batch, length in [(3, 7), (4, 10)]:
        src, tgt, src_mask, tgt_mask = _case(gen, batch, length)
        noisy = src.clone()
        hidden = src == 3
        noisy[hidden] = torch.randint(4, SRC_VOCAB, (int(hidden.sum()),), generator=gen)
        if not all_close(*_outputs(ctx, handle, [src, noisy], tgt, src_mask, tgt_mask)):
            fail(t("checks.forward.padding_leaks"))
    _require_source_use(ctx, handle)
    mc.CHECKS.require_context_use(ctx, PART)


def _require_source_use(ctx: CheckContext, handle: int) -> None:
    """Hidden source tokens may only be ignored by a forward that reads the visible ones."""
    gen = torch.Generator().manual_seed(ctx.seed + 37)
    (src, *rest), (changed, *_), _ = token_changed(_case(gen, 3, 7), 0, SRC_VOCAB, gen)  # source token 1 changed
    if all_close(*_outputs(ctx, handle, [src, changed], *rest)):
        fail(t("checks.forward.source_unused"))


def _outputs(ctx: CheckContext, handle: int, sources: list[Any], *rest: Any) -> list[Any]:
    """The student's eval-mode forward outputs for each source batch, with the same target and masks."""
    return [
        expect_tensor(
            ctx.student.run(handle, "forward", [src, *rest], mode="eval", set_globals=PART.set_globals),
            t("checks.module.output_name", cls="Transformer.forward"),
        )
        for src in sources
    ]


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "transformer_forward"))
