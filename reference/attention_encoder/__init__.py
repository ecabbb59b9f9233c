"""Trusted reference of Part 1 (attention and the encoder): the classes Part 2 gives students."""

from reference.attention_encoder.model import (
    GIVEN,
    GRADED,
    Encoder,
    EncoderLayer,
    FeedForwardNeuralNetwork,
    LayerNormalization,
    MultiHeadAttention,
    PositionalEncoding,
    ScaledDotProductAttention,
    TokenEmbedding,
    TransformerEmbedding,
    attention_weights,
    create_padding_mask_for_attention,
    sinusoidal_table,
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
