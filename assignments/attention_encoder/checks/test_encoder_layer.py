"""Hidden checks of EncoderLayer(embedding_dim, feed_forward_dim, num_heads, drop_prob).forward(x, mask).

Built with probes standing in for the student's MultiHeadAttention and FeedForwardNeuralNetwork
(where the class uses them), so these checks grade the layer's own work: routing x and the mask,
dropout, the residual additions and the post-norm LayerNormalizations.
"""

from __future__ import annotations

from typing import Any

import torch

from assignments.attention_encoder.checks import module_checks as mc
from assignments.attention_encoder.checks.cases import key_mask, padded_ids
from assignments.transformer_mt.reference import variants
from autograder.checks.declared import declared_checks

D_MODEL, FF_DIM, HEADS = 16, 32, 4


def _case(gen: torch.Generator, lengths: list[int], width: int) -> list[Any]:
    return [torch.randn(len(lengths), width, D_MODEL, generator=gen), key_mask(padded_ids(gen, lengths, width, 20))]


def _cases(gen: torch.Generator) -> list[list[Any]]:
    return [_case(gen, [5, 3], 5), _case(gen, [1], 1), _case(gen, [7, 2, 6, 7], 7)]


def _padding_pair(gen: torch.Generator) -> mc.CasePair:
    before = _case(gen, [4, 4, 4], 7)
    after = [before[0].clone(), before[1]]
    after[0][:, 4:] = torch.randn(3, 3, D_MODEL, generator=gen) * 3
    return before, after, [0, 1, 2, 3]


def _context_change(gen: torch.Generator) -> tuple[list[Any], list[Any], int]:
    before = _case(gen, [6, 6], 6)
    x = before[0].clone()
    x[:, 2] = torch.randn(2, D_MODEL, generator=gen) * 3
    return before, [x, before[1]], 2


PART = mc.ModulePart(
    cls="EncoderLayer",
    ctor_args=lambda p: [D_MODEL, FF_DIM, HEADS, p],
    make_cases=_cases,
    output_shape=lambda case: tuple(case[0].shape),
    layout_key="ae.layout.encoder_layer",
    substitute={"MultiHeadAttention": "ProbeMultiHeadAttention", "FeedForwardNeuralNetwork": "ProbeFeedForward"},
    dropout_submodules=("FeedForwardNeuralNetwork", "ProbeFeedForward"),
    padding_pair=_padding_pair,
    context_change=_context_change,
    deviations={"pre_norm": variants.pre_norm},
)


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "encoder_layer"))
