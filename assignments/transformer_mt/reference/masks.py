"""Reference attention and loss masks (the given padding masks and the graded look-ahead mask)."""

from __future__ import annotations

import torch
from torch import Tensor

# Convention for every attention mask here: 1/True = the query may attend to that key.
# The models apply `masked_fill(mask == 0, -1e10)`, which treats bool and int masks alike.


def _target_device(batch: Tensor, device: torch.device | str | None) -> torch.device:
    return batch.device if device is None else torch.device(device)


def create_padding_mask_for_attention(batch: Tensor, pad_idx: int, device: torch.device | str | None = None) -> Tensor:
    """Key-padding mask for attention, identical for every query row.

    Args:
        batch: (B, L) token ids.
        pad_idx: id of `<pad>`.
        device: where to put the mask; default the batch's device (the template used a global).

    Returns:
        bool (B, 1, L, L): [b, 0, i, j] is True iff token j of row b is not padding.
    """
    b, length = batch.shape
    key_ok = batch != pad_idx  # (B, L)
    # Materialised (not an expanded view) like the template's `repeat`, so in-place ops work on it.
    mask = key_ok[:, None, None, :].expand(b, 1, length, length).contiguous()
    return mask.to(_target_device(batch, device))


def create_look_ahead_mask_for_attention(
    tgt_batch: Tensor, pad_idx: int, device: torch.device | str | None = None
) -> Tensor:
    """Causal + key-padding mask for decoder self-attention (graded part 1).

    Dtype decision: the template's combining line (`.to(torch.int) & ...`) makes the original
    return an int tensor. This reference returns **bool** instead: it is the same 0/1 pattern,
    the models only test `mask == 0`, and bool cannot be misused arithmetically (`~int_mask`
    gives -1/-2, not a negation). Graders must accept either dtype from students.

    Args:
        tgt_batch: (B, T) target ids (decoder input).
        pad_idx: id of `<pad>`.
        device: where to put the mask; default the batch's device.

    Returns:
        bool (B, 1, T, T): [b, 0, i, j] is True iff j <= i and token j of row b is not padding.
    """
    tgt_length = tgt_batch.size(1)
    padding_mask = create_padding_mask_for_attention(tgt_batch, pad_idx, device)  # (B, 1, T, T)
    # (T, T) lower triangle of ones, j <= i; the master notebook's solution line is generated from it.
    look_ahead_mask = torch.tril(torch.ones(tgt_length, tgt_length, device=padding_mask.device))
    return look_ahead_mask.bool() & padding_mask  # broadcasts to (B, 1, T, T)


def create_padding_mask_for_loss(batch: Tensor, pad_idx: int, device: torch.device | str | None = None) -> Tensor:
    """Token mask for the loss.

    Args:
        batch: (B, L) token ids.
        pad_idx: id of `<pad>`.
        device: where to put the mask; default the batch's device.

    Returns:
        bool (B, L): True on non-pad tokens.
    """
    return (batch != pad_idx).to(_target_device(batch, device))
