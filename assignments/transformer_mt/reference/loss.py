"""Reference masked next-token loss (graded part 5)."""

from __future__ import annotations

from torch import Tensor, nn

from mtkit.constants import PAD_IDX

from .masks import create_padding_mask_for_loss


def calculate_loss(decoder_output: Tensor, tgt_batch: Tensor, criterion: nn.Module, pad_idx: int = PAD_IDX) -> Tensor:
    """Mean per-token loss over non-pad target tokens, with the usual one-position shift.

    Logits at positions [:, :-1] predict the tokens tgt_batch[:, 1:]. The template reads the
    globals `vocab_size[tgt_language]`, `pad_idx` and `device`; here the vocabulary size comes
    from the logits, the pad id is an argument and the devices follow the inputs.

    Args:
        decoder_output: (B, T, V) logits.
        tgt_batch: (B, T) target ids, `<sos>` first.
        criterion: per-token loss with reduction='none', e.g. `nn.CrossEntropyLoss(reduction='none')`
            (label smoothing allowed).
        pad_idx: id of `<pad>`.

    Returns:
        Scalar: sum of per-token losses at non-pad target positions divided by their count
        (0 when there is none, instead of 0/0).

    Raises:
        ValueError: if the criterion does not return one loss per token.
    """
    vocab = decoder_output.size(-1)
    logits = decoder_output[:, :-1].reshape(-1, vocab)  # (B*(T-1), V)
    target = tgt_batch[:, 1:].reshape(-1)  # (B*(T-1),)
    keep = create_padding_mask_for_loss(tgt_batch, pad_idx, device=decoder_output.device)[:, 1:].reshape(-1)
    per_token = criterion(logits, target.to(decoder_output.device))
    if per_token.shape != target.shape:
        raise ValueError(
            f"criterion must return one loss per token (reduction='none'); got shape {tuple(per_token.shape)}"
        )
    # masked_fill rather than multiplication: a non-finite loss at a padded position must not leak
    # in as NaN (0 * inf), and the gradient there is exactly zero either way.
    total = per_token.masked_fill(~keep, 0.0).sum()
    mean: Tensor = total / keep.sum().clamp_min(1)
    return mean
