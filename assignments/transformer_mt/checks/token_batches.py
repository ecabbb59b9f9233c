"""Random target-like token batches for Part 2's checks, with the course's special token ids."""

from __future__ import annotations

import torch
from torch import Tensor

from mtkit.constants import EOS_IDX, PAD_IDX, SOS_IDX

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
