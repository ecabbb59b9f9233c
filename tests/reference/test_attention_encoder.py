"""Tests for assignments.attention_encoder.reference: shapes, hand-computed values, padding, post-norm."""

from __future__ import annotations

import math

import torch

import assignments.transformer_mt.reference.model
from assignments.attention_encoder import reference as ae

PAD = 3


def test_the_reference_is_part_2s_given_code_not_a_copy() -> None:
    for name in (*ae.GRADED, "TokenEmbedding", "TransformerEmbedding", "LayerNormalization"):
        assert getattr(ae, name) is getattr(assignments.transformer_mt.reference.model, name)


def test_attention_by_hand() -> None:
    # dk = 4 so the scale is 1/2: scores = [2*1/2, 0] = [1, 0]; weights = [e, 1] / (e + 1).
    query = torch.tensor([[[[2.0, 0.0, 0.0, 0.0]]]])  # (1, 1, 1, 4)
    key = torch.tensor([[[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]])  # (1, 1, 2, 4)
    value = torch.tensor([[[[1.0], [0.0]]]])  # (1, 1, 2, 1)
    attention = ae.ScaledDotProductAttention(embedding_dim=8, attention_dim=4)
    open_mask = torch.ones(1, 1, 1, 2, dtype=torch.bool)
    out = attention(query, key, value, open_mask)
    assert out.shape == (1, 1, 1, 1)
    assert math.isclose(float(out), math.e / (math.e + 1), rel_tol=1e-6)
    weights = ae.attention_weights(query, key, open_mask, 4)
    assert torch.allclose(weights, torch.tensor([[[[math.e, 1.0]]]]) / (math.e + 1))
    # the key holding the 1 blocked (int mask, as Part 2's look-ahead mask): the output is 0
    blocked = torch.tensor([[[[0, 1]]]])
    assert float(attention(query, key, value, blocked)) == 0.0


def test_positional_table_by_hand() -> None:
    table = ae.sinusoidal_table(6, 8)
    assert table.shape == (6, 8)
    assert torch.equal(table[0], torch.tensor([0.0, 1.0] * 4))
    assert math.isclose(float(table[1, 0]), math.sin(1.0), abs_tol=1e-6)
    assert math.isclose(float(table[1, 1]), math.cos(1.0), abs_tol=1e-6)
    # column 2 = sin(pos / 10000^(2/8)) = sin(pos / 10)
    assert math.isclose(float(table[5, 2]), math.sin(0.5), abs_tol=1e-6)
    assert math.isclose(float(table[5, 3]), math.cos(0.5), abs_tol=1e-6)
    # forward returns the rows for x's length, whatever x holds; it does not add them
    rows = ae.PositionalEncoding(6, 8)(torch.full((2, 4), 7))
    assert torch.equal(rows, table[:4]) and not rows.requires_grad


def test_shapes_through_the_encoder() -> None:
    torch.manual_seed(0)
    ids = torch.tensor([[1, 5, 6, 7, 2], [1, 8, 2, PAD, PAD]])
    mask = ae.create_padding_mask_for_attention(ids, PAD)
    assert mask.shape == (2, 1, 5, 5) and mask.dtype == torch.bool
    mha = ae.MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    assert mha(x, x, x, mask).shape == (2, 5, 16)
    assert ae.FeedForwardNeuralNetwork(16, 32, 0.0)(x).shape == (2, 5, 16)
    layer = ae.EncoderLayer(16, 32, 4, 0.0).eval()
    out = layer(x, mask)
    # post-norm with the default LayerNorm parameters: every position has mean 0 and variance 1
    assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5)
    assert torch.allclose(out.var(-1, unbiased=False), torch.ones(2, 5), atol=1e-3)
    encoder = ae.Encoder(11, 20, 16, 32, 4, 2, 0.0).eval()
    assert encoder(ids, mask).shape == (2, 5, 16)


def test_padding_keys_do_not_reach_real_positions() -> None:
    torch.manual_seed(1)
    encoder = ae.Encoder(11, 20, 16, 32, 4, 2, 0.0).eval()
    ids = torch.tensor([[1, 5, 6, 2, PAD, PAD]])
    other = ids.clone()
    other[0, 4:] = torch.tensor([9, 10])  # not padding any more, but the mask still hides them
    mask = ae.create_padding_mask_for_attention(ids, PAD)
    with torch.no_grad():
        assert torch.allclose(encoder(ids, mask)[:, :4], encoder(other, mask)[:, :4], atol=1e-6)
        assert not torch.allclose(encoder(ids, mask)[:, 4:], encoder(other, mask)[:, 4:])
