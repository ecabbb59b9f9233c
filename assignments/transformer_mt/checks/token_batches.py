"""Random target-like token batches for Part 2's checks, with the course's special token ids."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from mtkit.constants import EOS_IDX, PAD_IDX, SOS_IDX

from ..reference.masks import create_look_ahead_mask_for_attention, create_padding_mask_for_attention

MIN_LENGTH = 2  # the shortest true length of a ragged row: <sos> <eos>


def token_batch(
    gen: torch.Generator, batch: int, length: int, vocab: int, pad_idx: int = PAD_IDX, ragged: bool = True
) -> Tensor:
    """Random target-like id sequences `<sos> w… <eos> <pad>…`, shape (batch, length).

    Args:
        gen: the seeded generator.
        batch: rows.
        length: columns (the common padded length).
        vocab: vocabulary size; ordinary tokens are drawn from [4, vocab) and never equal pad_idx.
        pad_idx: the padding id.
        ragged: random true lengths from MIN_LENGTH on (so rows end in padding); False fills every row.

    Returns:
        LongTensor (batch, length).
    """
    ids = torch.randint(4, vocab, (batch, length), generator=gen)
    ids[ids == pad_idx] = 4 if pad_idx != 4 else 5
    for row in range(batch):
        true_len = length
        if ragged and length > MIN_LENGTH:
            true_len = int(torch.randint(MIN_LENGTH, length + 1, (1,), generator=gen))
        if length >= 1:
            ids[row, 0] = SOS_IDX
        if true_len >= 2:
            ids[row, true_len - 1] = EOS_IDX
        ids[row, true_len:] = pad_idx
    if ragged and batch > 1 and length > MIN_LENGTH:
        ids[0, length - 1] = EOS_IDX  # one full-length row so that L is the batch maximum
        ids[0, 1 : length - 1] = ids[0, 1 : length - 1].clamp(min=4)
    return ids


def masked_batches(
    gen: torch.Generator, batch: int, length: int, src_vocab: int, tgt_vocab: int, ragged: bool = True
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """A ragged source batch and a target batch (ragged unless told), with the reference's masks
    (padding mask of the source, look-ahead mask of the target; both padded with PAD_IDX).

    Returns:
        (src, tgt, src_mask, tgt_mask).
    """
    src = token_batch(gen, batch, length, src_vocab, ragged=True)
    tgt = token_batch(gen, batch, length, tgt_vocab, ragged=ragged)
    return src, tgt, create_padding_mask_for_attention(src, PAD_IDX), create_look_ahead_mask_for_attention(tgt, PAD_IDX)


Pair = tuple[list[Any], list[Any], int]


def later_tokens_redrawn(before: list[Any], index: int, vocab: int, gen: torch.Generator, k: int = 4) -> Pair:
    """A causal pair: `before` with the tokens of argument `index` redrawn after position k (the
    last column kept); returns (before, after, k)."""
    tokens = before[index]
    after = list(before)
    after[index] = tokens.clone()
    after[index][:, k + 1 : -1] = torch.randint(4, vocab, (tokens.size(0), tokens.size(1) - k - 2), generator=gen)
    return before, after, k


def token_changed(before: list[Any], index: int, vocab: int, gen: torch.Generator, j: int = 1) -> Pair:
    """An earlier-change pair: `before` with a different ordinary token at position j of every row
    of argument `index`; returns (before, after, j)."""
    tokens = before[index]
    after = list(before)
    after[index] = tokens.clone()
    other = tokens[:, j] - 4 + 1 + torch.randint(0, vocab - 5, (tokens.size(0),), generator=gen)
    after[index][:, j] = other % (vocab - 4) + 4
    return before, after, j
