"""Hidden checks of part 3: Decoder(vocab_size, sequence_length, embedding_dim, ...).

The student's Decoder is built with probe layers standing in for DecoderLayer, so these checks
grade the Decoder's own work (embedding, chaining the layers with the right masks, the output
projection) whatever the state of the student's DecoderLayer.
"""

from __future__ import annotations

from typing import Any

import torch

from assignments.transformer_mt.checks import module_checks as mc
from assignments.transformer_mt.checks.token_batches import later_tokens_redrawn, masked_batches, token_changed
from assignments.transformer_mt.reference import variants
from autograder.checks.declared import declared_checks

VOCAB, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS = 23, 20, 16, 32, 4, 2
SRC_VOCAB = 29


def _case(gen: torch.Generator, batch: int, length: int, ragged: bool = True) -> list[Any]:
    _, tgt, src_mask, tgt_mask = masked_batches(gen, batch, length, SRC_VOCAB, VOCAB, ragged)
    return [tgt, torch.randn(batch, length, D_MODEL, generator=gen), src_mask, tgt_mask]


def _cases(gen: torch.Generator) -> list[Any]:
    return [_case(gen, 2, 6), _case(gen, 3, 1), _case(gen, 4, 11)]


PART = mc.ModulePart(
    cls="Decoder",
    method="forward",
    ctor_args=lambda p: [VOCAB, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS, p],
    make_cases=_cases,
    output_shape=lambda case: (*case[0].shape, VOCAB),
    causal_pair=lambda gen: later_tokens_redrawn(_case(gen, 3, 9, ragged=False), 0, VOCAB, gen),
    context_change=lambda gen: token_changed(_case(gen, 3, 8, ragged=False), 0, VOCAB, gen),
    substitute={"DecoderLayer": "ProbeDecoderLayer"},
    layout_key="checks.layout.decoder",
    deviations={
        "sqrt_d_scaling": variants.sqrt_d_scaling,
        "log_softmax_output": variants.log_softmax_output,
        "final_norm": variants.final_norm,
        "swapped_masks": variants.swapped_masks,
        "learned_positions": variants.learned_positions,
    },
)


# The declared checks of this part (declared.yml): builds, parameters, outputs, ...
globals().update(declared_checks(__file__, "decoder"))
