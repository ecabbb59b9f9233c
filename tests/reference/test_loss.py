"""Tests for assignments.transformer_mt.reference.loss.calculate_loss on hand-computed padded cases."""

import math

import pytest
import torch
from torch import nn

from assignments.transformer_mt.reference.loss import calculate_loss


def _log_softmax(row: list[float], k: int) -> float:
    return row[k] - math.log(sum(math.exp(v) for v in row))


def test_hand_computed_padded_case():
    # B=2, T=3, V=4, pad=3. Targets after the shift: row 0 -> [2, 3(pad)], row 1 -> [0, 2].
    logits = [
        [[0.0, 1.0, 2.0, 0.5], [1.0, 0.0, 0.0, 0.0], [9.0, 9.0, 9.0, 9.0]],
        [[0.3, 0.2, 0.1, 0.0], [0.0, 0.0, 3.0, 1.0], [5.0, -5.0, 0.0, 0.0]],
    ]
    tgt = torch.tensor([[1, 2, 3], [1, 0, 2]])
    loss = calculate_loss(torch.tensor(logits), tgt, nn.CrossEntropyLoss(reduction="none"), pad_idx=3)
    # Non-pad target tokens: (row 0, pos 0 -> 2), (row 1, pos 0 -> 0), (row 1, pos 1 -> 2).
    terms = [_log_softmax(logits[0][0], 2), _log_softmax(logits[1][0], 0), _log_softmax(logits[1][1], 2)]
    expected = -sum(terms) / 3
    assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_gradient_is_zero_at_padded_and_last_positions():
    torch.manual_seed(0)
    logits = torch.randn(2, 4, 5, requires_grad=True)
    tgt = torch.tensor([[1, 4, 2, 3], [1, 2, 3, 3]])  # shifted targets: [4, 2, pad], [2, pad, pad]
    calculate_loss(logits, tgt, nn.CrossEntropyLoss(reduction="none"), pad_idx=3).backward()
    assert logits.grad is not None
    grad_norm = logits.grad.abs().sum(-1)  # (B, T)
    used = torch.tensor([[True, True, False, False], [True, False, False, False]])
    assert torch.all(grad_norm[~used] == 0)
    assert torch.all(grad_norm[used] > 0)


def test_label_smoothing_and_default_pad_index():
    torch.manual_seed(1)
    logits = torch.randn(1, 3, 6)
    tgt = torch.tensor([[1, 5, 3]])  # default pad_idx is 3: one real target token
    crit = nn.CrossEntropyLoss(reduction="none", label_smoothing=0.1)
    expected = crit(logits[0, :1], torch.tensor([5]))[0]
    assert calculate_loss(logits, tgt, crit).item() == pytest.approx(expected.item(), rel=1e-6)


def test_all_padding_gives_zero_not_nan():
    crit = nn.CrossEntropyLoss(reduction="none")
    loss = calculate_loss(torch.randn(1, 3, 4), torch.tensor([[1, 3, 3]]), crit)
    assert loss.item() == 0.0


def test_reducing_criterion_is_rejected():
    with pytest.raises(ValueError, match="reduction='none'"):
        calculate_loss(torch.randn(1, 3, 4), torch.tensor([[1, 2, 3]]), nn.CrossEntropyLoss())
