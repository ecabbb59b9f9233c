"""Tests of assignments.transformer_mt.reference.model: SPEC layout, numerics, dropout placement, causality, padding."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from assignments.transformer_mt.reference.masks import (
    create_look_ahead_mask_for_attention,
    create_padding_mask_for_attention,
)
from assignments.transformer_mt.reference.model import (
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    PositionalEncoding,
    ScaledDotProductAttention,
    TokenEmbedding,
    Transformer,
)

PAD = 3
VOCAB = {"de": 23, "en": 17}


def _model(drop_prob: float = 0.0, num_layers: int = 2) -> Transformer:
    torch.manual_seed(0)
    return Transformer(VOCAB, 20, 16, 32, 4, num_layers, drop_prob)


def _forward(model: Transformer, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    src_mask = create_padding_mask_for_attention(src, PAD)
    return model(src, tgt, src_mask, create_look_ahead_mask_for_attention(tgt, PAD))


# Expected state_dict keys for one layer, written out from SPEC.md's attribute lists.
_MHA = [f"{w}.{p}" for w in ("Wq", "Wk", "Wv", "Wo") for p in ("weight", "bias")]
_LN = ["layer_norm.weight", "layer_norm.bias"]
_FFN = ["W1.weight", "W1.bias", "W2.weight", "W2.bias"]


def _expected_keys() -> list[str]:
    enc = "encoder.encoder_layers.0."
    dec = "decoder.decoder_layers.0."
    return (
        ["encoder.transformer_embedding.tok_emb.weight"]
        + [enc + "multi_head_attention." + k for k in _MHA]
        + [enc + "norm1." + k for k in _LN]
        + [enc + "feed_forward_neural_network." + k for k in _FFN]
        + [enc + "norm2." + k for k in _LN]
        + ["decoder.transformer_embedding.tok_emb.weight"]
        + [dec + "masked_multi_head_attention." + k for k in _MHA]
        + [dec + "norm1." + k for k in _LN]
        + [dec + "enc_dec_attention." + k for k in _MHA]
        + [dec + "norm2." + k for k in _LN]
        + [dec + "feed_forward_neural_network." + k for k in _FFN]
        + [dec + "norm3." + k for k in _LN]
        + ["decoder.dense_layer.weight", "decoder.dense_layer.bias"]
    )


def test_state_dict_keys_and_order_match_spec():
    model = _model(num_layers=1)
    assert list(model.state_dict().keys()) == _expected_keys()
    assert [n for n, _ in model.named_parameters()] == _expected_keys()  # nothing is a buffer


def test_module_registration_order_of_decoder_layer():
    names = [n for n, _ in DecoderLayer(8, 16, 2, 0.1).named_children()]
    assert names == [
        "masked_multi_head_attention", "norm1", "dropout1", "enc_dec_attention", "norm2", "dropout2",
        "feed_forward_neural_network", "norm3", "dropout3",
    ]  # fmt: skip
    assert [n for n, _ in EncoderLayer(8, 16, 2, 0.1).named_children()] == [
        "multi_head_attention", "norm1", "dropout1", "feed_forward_neural_network", "norm2", "dropout2",
    ]  # fmt: skip


def test_dropout_modules_are_exactly_the_spec_ones():
    # No dropout after the embeddings and none inside attention: 3 per encoder layer, 4 per decoder layer.
    model = _model(drop_prob=0.3, num_layers=1)
    drops = sorted(n for n, m in model.named_modules() if isinstance(m, nn.Dropout))
    ffn = "feed_forward_neural_network.dropout"
    assert drops == sorted(
        ["encoder.encoder_layers.0." + s for s in ("dropout1", "dropout2", ffn)]
        + ["decoder.decoder_layers.0." + s for s in ("dropout1", "dropout2", "dropout3", ffn)]
    )
    assert all(m.p == 0.3 for m in model.modules() if isinstance(m, nn.Dropout))


def test_shapes_and_languages():
    model = _model()
    assert model.encoder.transformer_embedding.tok_emb.num_embeddings == 23
    assert model.decoder.dense_layer.out_features == 17
    swapped = Transformer(VOCAB, 20, 16, 32, 4, 1, 0.0, src_language="en", tgt_language="de")
    assert swapped.decoder.dense_layer.out_features == 23
    src, tgt = torch.randint(4, 23, (3, 7)), torch.randint(4, 17, (3, 7))
    assert _forward(model, src, tgt).shape == (3, 7, 17)


def test_positional_encoding_values_and_quirks():
    pe = PositionalEncoding(10, 6)
    assert isinstance(pe.positional_encoding, torch.Tensor) and len(pe.state_dict()) == 0
    table = pe.positional_encoding
    assert table.shape == (10, 6)
    assert table[0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    pos = 3
    for i in range(3):  # columns 2i (sin) and 2i+1 (cos) share the angle pos / 10000^(2i/d)
        angle = pos / 10000 ** (2 * i / 6)
        assert table[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
        assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
    out = pe(torch.zeros(2, 4, dtype=torch.long))  # returns rows only, does not add
    assert out.shape == (4, 6) and torch.equal(out, table[:4]) and not out.requires_grad
    assert PositionalEncoding(5, 7).positional_encoding.shape == (5, 7)  # odd width works


def test_embedding_has_no_scaling():
    model = _model()
    emb = model.encoder.transformer_embedding
    assert isinstance(emb.tok_emb, TokenEmbedding) and isinstance(emb.tok_emb, nn.Embedding)
    x = torch.tensor([[4, 5, 6]])
    expected = emb.tok_emb.weight[x] + emb.pos_emb.positional_encoding[:3]
    assert torch.allclose(emb(x), expected)


def test_scaled_dot_product_attention_masking_hand_case():
    attn = ScaledDotProductAttention(4, 4)
    q = torch.tensor([[[[1.0, 0.0, 0.0, 0.0]]]])  # (1, 1, 1, 4)
    k = torch.tensor([[[[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [9.0, 0.0, 0.0, 0.0]]]])
    v = torch.tensor([[[[1.0], [3.0], [100.0]]]])
    mask = torch.tensor([[[[1, 1, 0]]]])  # int mask: third key hidden
    w0 = math.exp(2 / 2) / (math.exp(2 / 2) + 1)  # scores 2/sqrt(4) and 0
    assert attn(q, k, v, mask).item() == pytest.approx(w0 * 1 + (1 - w0) * 3, rel=1e-6)
    all_masked = attn(q, k, v, torch.zeros(1, 1, 1, 3))  # -1e10 everywhere: uniform, not NaN
    assert all_masked.item() == pytest.approx(104 / 3, rel=1e-5)


@pytest.mark.parametrize("lk", [5, 8])
def test_multi_head_attention_matches_torch(lk):
    # lk == 5 is the original's equal-length case; lk == 8 the supported superset.
    torch.manual_seed(2)
    mha = MultiHeadAttention(12, 3)
    ref = nn.MultiheadAttention(12, 3, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.Wq.weight, mha.Wk.weight, mha.Wv.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.Wq.bias, mha.Wk.bias, mha.Wv.bias]))
        ref.out_proj.weight.copy_(mha.Wo.weight)
        ref.out_proj.bias.copy_(mha.Wo.bias)
    q, kv = torch.randn(2, 5, 12), torch.randn(2, lk, 12)
    key_ok = torch.ones(2, lk, dtype=torch.bool)
    key_ok[1, -2:] = False
    mask = key_ok[:, None, None, :].expand(2, 1, 5, lk)
    ours = mha(q, kv, kv, mask)
    theirs, _ = ref(q, kv, kv, key_padding_mask=~key_ok, need_weights=False)
    assert torch.allclose(ours, theirs, atol=1e-5)


def test_decoder_layer_dropout_placement_in_train_mode():
    torch.manual_seed(3)
    layer = DecoderLayer(8, 16, 2, 0.4).train()
    dec, enc = torch.randn(2, 4, 8), torch.randn(2, 4, 8)
    src_mask = torch.ones(2, 1, 4, 4, dtype=torch.bool)
    trg_mask = torch.ones(4, 4, dtype=torch.bool).tril().expand(2, 1, 4, 4)
    torch.manual_seed(7)
    out = layer(dec, enc, src_mask, trg_mask)

    def drop(t):
        return F.dropout(t, 0.4, training=True)

    torch.manual_seed(7)  # same RNG stream, dropout applied in the SPEC's order
    x = layer.norm1(drop(layer.masked_multi_head_attention(dec, dec, dec, trg_mask)) + dec)
    x = layer.norm2(drop(layer.enc_dec_attention(x, enc, enc, src_mask)) + x)
    ffn = layer.feed_forward_neural_network
    x = layer.norm3(drop(ffn.W2(drop(torch.relu(ffn.W1(x))))) + x)
    assert torch.allclose(out, x, atol=1e-6)


def test_encoder_layer_dropout_placement_in_train_mode():
    torch.manual_seed(4)
    layer = EncoderLayer(8, 16, 2, 0.4).train()
    x0, mask = torch.randn(2, 4, 8), torch.ones(2, 1, 4, 4, dtype=torch.bool)
    torch.manual_seed(8)
    out = layer(x0, mask)

    def drop(t):
        return F.dropout(t, 0.4, training=True)

    torch.manual_seed(8)
    x = layer.norm1(drop(layer.multi_head_attention(x0, x0, x0, mask)) + x0)
    ffn = layer.feed_forward_neural_network
    x = layer.norm2(drop(ffn.W2(drop(torch.relu(ffn.W1(x))))) + x)
    assert torch.allclose(out, x, atol=1e-6)


def test_causality_future_target_never_changes_earlier_logits():
    model = _model(drop_prob=0.5).eval()
    torch.manual_seed(5)
    src, tgt = torch.randint(4, 23, (2, 8)), torch.randint(4, 17, (2, 8))
    base = _forward(model, src, tgt)
    for k in (1, 4, 7):
        changed = tgt.clone()
        changed[:, k] = (changed[:, k] - 4 + 1) % 13 + 4  # another non-pad token
        out = _forward(model, src, changed)
        assert torch.allclose(out[:, :k], base[:, :k], atol=1e-5)
        assert not torch.allclose(out[:, k], base[:, k], atol=1e-3)  # position k itself does see it


def test_padding_invariance():
    model = _model().eval()
    src = torch.tensor([[1, 5, 6, 7, 2], [1, 8, 2, PAD, PAD]])
    tgt = torch.tensor([[1, 9, 10, 2, PAD], [1, 11, 12, 13, 2]])
    base = _forward(model, src, tgt)
    extra = torch.full((2, 4), PAD)
    out = _forward(model, torch.cat([src, extra], 1), torch.cat([tgt, extra], 1))
    real = tgt != PAD
    assert torch.allclose(out[:, :5][real], base[real], atol=1e-5)


def test_int_and_bool_masks_give_the_same_logits():
    model = _model().eval()
    src, tgt = torch.randint(4, 23, (2, 6)), torch.randint(4, 17, (2, 6))
    src_mask = create_padding_mask_for_attention(src, PAD)
    tgt_mask = create_look_ahead_mask_for_attention(tgt, PAD)
    a = model(src, tgt, src_mask, tgt_mask)
    b = model(src, tgt, src_mask.to(torch.int), tgt_mask.to(torch.int))
    assert torch.equal(a, b)
