"""Stand-in modules that isolate one graded part from the others during checks.

`Decoder` is checked with these `ProbeDecoderLayer`s in place of the student's `DecoderLayer`,
and `Transformer.forward` with a `ProbeDecoder` in place of the student's `Decoder`, so that a
bug in one part never costs points in another. The probes are plain, deliberately simple code
(no attention): they reveal nothing about the solution and are safe to send into the worker,
which receives PROBE_SOURCE as text. Each probe reacts to every input it is given (both masks,
the encoder output, dropout), so a part that routes an input wrongly is still caught.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

PROBE_SOURCE = '''
import torch
from torch import nn


def _masked_mean(values, mask):
    # values (B, S, d), mask (B, 1, T, S) nonzero where visible -> (B, T, d)
    weights = (mask[:, 0] != 0).to(values.dtype)
    return weights @ values / weights.sum(dim=-1, keepdim=True).clamp(min=1.0)


class ProbeDecoderLayer(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
        super().__init__()
        self.mix = nn.Linear(embedding_dim, feed_forward_dim)
        self.back = nn.Linear(feed_forward_dim, embedding_dim)
        self.head_gain = nn.Parameter(torch.linspace(0.5, 1.5, num_heads))
        self.dropout = nn.Dropout(drop_prob)

    def forward(self, dec, enc, src_mask, trg_mask):
        seen = _masked_mean(dec, trg_mask)
        context = _masked_mean(enc, src_mask)
        hidden = torch.tanh(self.mix(seen + 0.5 * dec))
        return dec + self.dropout(self.back(hidden)) * self.head_gain.mean() + 0.25 * context


class ProbeDecoder(nn.Module):
    def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads,
                 num_layers, drop_prob):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding_dim)
        self.layer_gain = nn.Parameter(torch.linspace(0.5, 1.5, num_layers * num_heads))
        self.out = nn.Linear(embedding_dim, vocab_size)
        self.dropout = nn.Dropout(drop_prob)
        self.sequence_length = sequence_length
        self.feed_forward_dim = feed_forward_dim

    def forward(self, dec, enc, src_mask, trg_mask):
        x = self.embed(dec)
        seen = _masked_mean(x, trg_mask)
        context = _masked_mean(enc, src_mask)
        return self.out(self.dropout(torch.tanh(x + seen) + 0.5 * context)) * self.layer_gain.mean()
'''

PROBE_NAMES = ("ProbeDecoderLayer", "ProbeDecoder")


def probe_classes() -> dict[str, Any]:
    """Build the probe classes in the trusted process (for the reference side of a check).

    Returns:
        {"ProbeDecoderLayer": class, "ProbeDecoder": class}.
    """
    namespace: dict[str, Any] = {}
    exec(compile(PROBE_SOURCE, "<probes>", "exec"), namespace)  # our own code, not the student's
    return {name: namespace[name] for name in PROBE_NAMES}


@contextlib.contextmanager
def reference_with_probes(substitute: dict[str, str]) -> Iterator[None]:
    """Let probes stand in for reference classes while reference modules are constructed.

    Args:
        substitute: reference class name -> probe name, e.g. {"DecoderLayer": "ProbeDecoderLayer"}.
    """
    import reference.model

    probes = probe_classes()
    saved = {name: getattr(reference.model, name) for name in substitute}
    try:
        for name, probe in substitute.items():
            setattr(reference.model, name, probes[probe])
        yield
    finally:
        for name, original in saved.items():
            setattr(reference.model, name, original)
