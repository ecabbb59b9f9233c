"""Hidden checks of part 2: DecoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob)."""

from __future__ import annotations

from typing import Any

import torch

from assignments.transformer_mt.checks import module_checks as mc
from assignments.transformer_mt.checks.token_batches import masked_batches
from assignments.transformer_mt.reference import variants
from autograder.checks.declared import declared_checks

D_MODEL, FF_DIM, HEADS = 16, 32, 4
SRC_VOCAB, TGT_VOCAB = 29, 23


def _case(gen: torch.Generator, batch: int, length: int, ragged: bool = True) -> list[Any]:
    *_, src_mask, tgt_mask = masked_batches(gen, batch, length, SRC_VOCAB, TGT_VOCAB, ragged)
    dec, enc = (torch.randn(batch, length, D_MODEL, generator=gen) for _ in range(2))
    return [dec, enc, src_mask, tgt_mask]


def _cases(gen: torch.Generator) -> list[Any]:
    return [_case(gen, 2, 5), _case(gen, 3, 1), _case(gen, 4, 9)]


def _causal_pair(gen: torch.Generator) -> tuple[list[Any], list[Any], int]:
    before = _case(gen, 3, 8, ragged=False)
    after = list(before)
    k = 3
    after[0] = before[0].clone()
    after[0][:, k + 1 :] = torch.randn(3, 8 - k - 1, D_MODEL, generator=gen)
    return before, after, k


def _earlier_change(gen: torch.Generator) -> tuple[list[Any], list[Any], int]:
    before = _case(gen, 3, 7, ragged=False)
    after = list(before)
    j = 1
    after[0] = before[0].clone()
    after[0][:, j] = torch.randn(3, D_MODEL, generator=gen) * 2
    return before, after, j


PART = mc.ModulePart(
    cls="DecoderLayer",
    method="forward",
    ctor_args=lambda p: [D_MODEL, FF_DIM, HEADS, p],
    make_cases=_cases,
    output_shape=lambda case: tuple(case[0].shape),
    causal_pair=_causal_pair,
    context_change=_earlier_change,
    dropout_submodules=("FeedForwardNeuralNetwork",),
    layout_key="checks.layout.decoder_layer",
    deviations={"swapped_masks": variants.swapped_masks, "pre_norm": variants.pre_norm},
)


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "decoder_layer"))
