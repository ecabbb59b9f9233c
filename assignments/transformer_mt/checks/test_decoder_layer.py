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


def _changed(gen: torch.Generator, length: int, columns: int | slice, scale: float) -> tuple[list[Any], list[Any]]:
    """A full-length case and a copy whose decoder input is redrawn (times `scale`) at `columns`."""
    before = _case(gen, 3, length, ragged=False)
    after = [before[0].clone(), *before[1:]]
    after[0][:, columns] = torch.randn(after[0][:, columns].shape, generator=gen) * scale
    return before, after


PART = mc.ModulePart(
    cls="DecoderLayer",
    method="forward",
    ctor_args=lambda p: [D_MODEL, FF_DIM, HEADS, p],
    make_cases=_cases,
    output_shape=lambda case: tuple(case[0].shape),
    causal_pair=lambda gen: (*_changed(gen, 8, slice(4, None), 1.0), 3),  # positions after 3 redrawn
    context_change=lambda gen: (*_changed(gen, 7, 1, 2.0), 1),  # position 1 changed
    dropout_submodules=("FeedForwardNeuralNetwork",),
    layout_key="checks.layout.decoder_layer",
    deviations={"swapped_masks": variants.swapped_masks, "pre_norm": variants.pre_norm},
)


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "decoder_layer"))
