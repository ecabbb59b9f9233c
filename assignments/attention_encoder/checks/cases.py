"""Seeded inputs of Part 1's checks: padded id batches and the masks the given code makes."""

from __future__ import annotations

import torch
from torch import Tensor

import assignments.attention_encoder.reference as part1

PAD_IDX = 3  # the course's id of <pad> (unk, sos, eos, pad = 0, 1, 2, 3)


def padded_ids(gen: torch.Generator, lengths: list[int], width: int, vocab: int) -> Tensor:
    """Rows of ordinary tokens (ids 4..vocab-1) of the given true lengths, padded to `width`.

    Args:
        gen: the seeded generator.
        lengths: the true length of each row (1..width).
        width: the common padded length.
        vocab: vocabulary size.

    Returns:
        LongTensor (len(lengths), width).
    """
    ids = torch.randint(4, vocab, (len(lengths), width), generator=gen)
    for row, length in enumerate(lengths):
        ids[row, length:] = PAD_IDX
    return ids


def key_mask(ids: Tensor) -> Tensor:
    """The given create_padding_mask_for_attention: bool (B, 1, L, L), True where the key is real."""
    return part1.create_padding_mask_for_attention(ids, PAD_IDX)


def other_tokens(gen: torch.Generator, ids: Tensor, vocab: int) -> Tensor:
    """Ordinary tokens that differ from `ids` everywhere (same shape)."""
    shift = torch.randint(1, vocab - 4, ids.shape, generator=gen)
    return (ids.clamp(min=4) - 4 + shift) % (vocab - 4) + 4
