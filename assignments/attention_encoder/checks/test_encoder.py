"""Hidden checks of Encoder(vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads,
num_layers, drop_prob).forward(x, padding_mask).

Built with probes standing in for the student's EncoderLayer and PositionalEncoding (where the
class uses them), so these checks grade the Encoder's own work: the embedding, chaining num_layers
layers in an nn.ModuleList, each given the previous output and the padding mask.
"""

from __future__ import annotations

from typing import Any

import torch

from assignments.attention_encoder.checks import module_checks as mc
from assignments.attention_encoder.checks.cases import key_mask, other_tokens, padded_ids
from assignments.transformer_mt.reference import variants
from autograder.checks.declared import declared_checks

VOCAB, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS = 17, 20, 16, 32, 4, 2


def _case(gen: torch.Generator, lengths: list[int], width: int) -> list[Any]:
    ids = padded_ids(gen, lengths, width, VOCAB)
    return [ids, key_mask(ids)]


def _cases(gen: torch.Generator) -> list[list[Any]]:
    return [_case(gen, [6, 3], 6), _case(gen, [1], 1), _case(gen, [11, 4, 9], 11)]


def _padding_pair(gen: torch.Generator) -> mc.CasePair:
    before = _case(gen, [4, 4, 4], 7)
    ids = before[0].clone()
    ids[:, 4:] = other_tokens(gen, ids[:, 4:], VOCAB)  # real tokens now, still hidden by the mask
    return before, [ids, before[1]], [0, 1, 2, 3]


def _context_change(gen: torch.Generator) -> tuple[list[Any], list[Any], int]:
    before = _case(gen, [6, 6], 6)
    ids = before[0].clone()
    ids[:, 2] = other_tokens(gen, ids[:, 2], VOCAB)
    return before, [ids, before[1]], 2


PART = mc.ModulePart(
    cls="Encoder",
    ctor_args=lambda p: [VOCAB, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS, p],
    make_cases=_cases,
    output_shape=lambda case: (*case[0].shape, D_MODEL),
    layout_key="ae.layout.encoder",
    substitute={"EncoderLayer": "ProbeEncoderLayer", "PositionalEncoding": "ProbePositionalEncoding"},
    padding_pair=_padding_pair,
    context_change=_context_change,
    deviations={
        "sqrt_d_scaling": variants.sqrt_d_scaling,
        "final_norm": variants.final_norm,
        "learned_positions": variants.learned_positions,
    },
)


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "encoder"))
