"""tensor_basics' trusted reference: softmax, scaled dot-product attention and layer normalisation."""

# The checks compare the students' functions with these (checks/declared.yml); solutions.yml
# generates the master notebook's solution blocks from their bodies. Trusted code: it runs in the
# grader's process, never in the worker.

from __future__ import annotations

import math

import torch
from torch import Tensor


def softmax(x: Tensor) -> Tensor:
    """Softmax over the last dimension; the row's largest value is subtracted first (no overflow)."""
    shifted = x - x.amax(dim=-1, keepdim=True)
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=-1, keepdim=True)


def attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
    """softmax(query keyᵀ / sqrt(d_k)) value over the last two dimensions; False in mask hides a key."""
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # (..., L_q, L_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ value


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """Normalise the last dimension to mean 0 and variance 1 (biased, eps inside the root), then scale and shift."""
    mean = x.mean(dim=-1, keepdim=True)
    variance = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(variance + eps) * gamma + beta
