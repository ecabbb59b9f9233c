"""Stand-in modules that isolate one graded class of Part 1 from the student's other classes.

`MultiHeadAttention` is checked with `ProbeScaledDotProductAttention` in place of the student's
attention, `EncoderLayer` with probes for `MultiHeadAttention` and `FeedForwardNeuralNetwork`,
and `Encoder` with probes for `EncoderLayer` and `PositionalEncoding`, so that a bug in one part
never costs points in another. A probe counts as used only where the student's class calls it:
the reference is also tried without it (`ModuleChecks.probe_choices`), so a correct class that
computes attention inline, say, is compared with the plain reference.

The probes are deliberately NOT the solution (bounded sigmoid weights instead of a softmax over
scaled scores, tanh instead of ReLU, a made-up position table): they are safe to send into the
worker, which receives PROBE_SOURCE as text. Each reacts to every input it is given (the mask,
its constructor arguments, dropout), so a class that routes something wrongly is still caught.
"""

from __future__ import annotations

PROBE_SOURCE = """
import torch
from torch import nn


def _visible_weights(query, key, mask, scale):
    # (..., Lq, Lk) weights: sigmoid(q.k / scale) on visible keys (mask != 0), rows normalised.
    raw = torch.sigmoid(torch.matmul(query, key.transpose(-2, -1)) / scale) + 0.05
    if mask is not None:
        raw = raw * (mask != 0).to(raw.dtype)
    return raw / raw.sum(dim=-1, keepdim=True).clamp(min=1e-6)


class ProbeScaledDotProductAttention(nn.Module):
    def __init__(self, embedding_dim, attention_dim):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.attention_dim = attention_dim

    def forward(self, query, key, value, mask=None):
        weights = _visible_weights(query, key, mask, float(self.attention_dim))
        return torch.matmul(weights, value) + 0.1 * torch.tanh(query).mean(dim=-1, keepdim=True)


class ProbeMultiHeadAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        self.mix = nn.Linear(embedding_dim, embedding_dim)
        self.head_gain = nn.Parameter(torch.linspace(0.5, 1.5, num_heads))

    def forward(self, query, key, value, mask=None):
        if mask is not None and mask.dim() == 4:
            mask = mask[:, 0]
        weights = _visible_weights(query, key, mask, float(query.size(-1)))
        return self.mix(torch.matmul(weights, value)) * self.head_gain.mean() + 0.1 * torch.tanh(query)


class ProbeFeedForward(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, drop_prob):
        super().__init__()
        self.up = nn.Linear(embedding_dim, feed_forward_dim)
        self.dropout = nn.Dropout(drop_prob)
        self.down = nn.Linear(feed_forward_dim, embedding_dim)

    def forward(self, x):
        return self.down(self.dropout(torch.tanh(self.up(x))))


class ProbePositionalEncoding(nn.Module):
    def __init__(self, max_length, embedding_dim):
        super().__init__()
        rows = torch.arange(max_length, dtype=torch.float32).unsqueeze(1)
        columns = torch.arange(embedding_dim, dtype=torch.float32).unsqueeze(0)
        self.table = torch.cos(0.3 * rows * (columns + 1) / embedding_dim) * 0.5

    def forward(self, x):
        return self.table[: x.size(1)].to(x.device)


class ProbeEncoderLayer(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
        super().__init__()
        self.size = embedding_dim  # what code after public implementations reads (layer.size)
        self.mix = nn.Linear(embedding_dim, feed_forward_dim)
        self.back = nn.Linear(feed_forward_dim, embedding_dim)
        self.head_gain = nn.Parameter(torch.linspace(0.5, 1.5, num_heads))
        self.dropout = nn.Dropout(drop_prob)

    def forward(self, x, padding_mask):
        weights = _visible_weights(x, x, padding_mask[:, 0], float(x.size(-1)))
        hidden = torch.tanh(self.mix(torch.matmul(weights, x) + 0.5 * x))
        return x + self.dropout(self.back(hidden)) * self.head_gain.mean()
"""
