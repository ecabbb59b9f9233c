"""Part 1's reference modules: Part 2's given encoder classes (imported, not copied) and helpers.

Part 2 hands students the encoder side as given code; that code is what Part 1's students write.
So the reference of Part 1 *is* `assignments.transformer_mt.reference.model`'s encoder classes, re-exported here
unchanged, so that the two assignments can never drift apart. Two helpers the Part 1 checks use on
the trusted side are added (the attention weights, the sinusoidal table as a function).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from assignments.transformer_mt.reference.masks import create_padding_mask_for_attention
from assignments.transformer_mt.reference.model import (
    Encoder,
    EncoderLayer,
    FeedForwardNeuralNetwork,
    LayerNormalization,
    MultiHeadAttention,
    PositionalEncoding,
    ScaledDotProductAttention,
    TokenEmbedding,
    TransformerEmbedding,
)

__all__ = [
    "GIVEN",
    "GRADED",
    "Encoder",
    "EncoderLayer",
    "FeedForwardNeuralNetwork",
    "LayerNormalization",
    "MultiHeadAttention",
    "PositionalEncoding",
    "ScaledDotProductAttention",
    "TokenEmbedding",
    "TransformerEmbedding",
    "attention_weights",
    "create_padding_mask_for_attention",
    "sinusoidal_table",
]

# What Part 1's notebook gives (runs as is) and what students write (graded), by class name.
GIVEN = ("TokenEmbedding", "TransformerEmbedding", "LayerNormalization", "create_padding_mask_for_attention")
GRADED = (
    "ScaledDotProductAttention",
    "MultiHeadAttention",
    "PositionalEncoding",
    "FeedForwardNeuralNetwork",
    "EncoderLayer",
    "Encoder",
)

MASKED_SCORE = -1e10  # the score a blocked key gets before the softmax (as in Part 2's given code)


def attention_weights(query: Tensor, key: Tensor, mask: Tensor | None, attention_dim: int) -> Tensor:
    """The softmax weights ScaledDotProductAttention applies to the values.

    Args:
        query: (..., Lq, dk) queries.
        key: (..., Lk, dk) keys.
        mask: broadcastable to (..., Lq, Lk); 0/False = blocked. None: nothing blocked.
        attention_dim: dk, the scale is 1 / sqrt(attention_dim).

    Returns:
        (..., Lq, Lk) weights; each row sums to 1.
    """
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(attention_dim)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, MASKED_SCORE)
    return torch.softmax(scores, dim=-1)


def sinusoidal_table(max_length: int, embedding_dim: int) -> Tensor:
    """The positional-encoding table of PositionalEncoding(max_length, embedding_dim).

    Args:
        max_length: rows (positions 0..max_length-1).
        embedding_dim: columns.

    Returns:
        (max_length, embedding_dim) float32: column 2i = sin(pos / 10000^(2i/d)), 2i+1 = cos(...).
    """
    table: Tensor = PositionalEncoding(max_length, embedding_dim).positional_encoding.clone()
    return table
