"""Tests of assignments.transformer_mt.reference.fast_decode: the generic greedy decoder's tokens, near-ties too."""

import copy
import random
import types

import pytest
import torch
from torch import nn

from assignments.transformer_mt.reference.fast_decode import LengthCap, fast_greedy_translate
from assignments.transformer_mt.reference.loss import calculate_loss
from assignments.transformer_mt.reference.masks import (
    create_look_ahead_mask_for_attention,
    create_padding_mask_for_attention,
)
from assignments.transformer_mt.reference.model import MultiHeadAttention, Transformer
from mtkit.decoding import greedy_translate

SOS, EOS, PAD = 1, 2, 3
V_SRC, V_TGT = 20, 16
MAX_NEW = 14
TIE = 1e-3  # a top-2 logit margin below this counts as a tie that float noise may flip


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    # Tiny models: one thread is faster, and two threads crawl when the shared CPU is busy.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _src_mask(src: torch.Tensor) -> torch.Tensor:
    return create_padding_mask_for_attention(src, PAD)


def _tgt_mask(tgt: torch.Tensor) -> torch.Tensor:
    return create_look_ahead_mask_for_attention(tgt, PAD)


def _sources(n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[SOS] + [rng.randrange(4, V_SRC) for _ in range(rng.randrange(1, 9))] + [EOS] for _ in range(n)]


def _generic(model, srcs, **kw):
    return greedy_translate(
        model, srcs, src_mask_fn=create_padding_mask_for_attention,
        tgt_mask_fn=create_look_ahead_mask_for_attention, max_new_tokens=MAX_NEW, **kw,
    )  # fmt: skip


def _rescore(model: Transformer, src: list[int], out: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forced logits for <sos> + out, and the top-2 margin at each position."""
    dec = [SOS, *out]
    length = max(len(src), len(dec))
    s = torch.tensor([src + [PAD] * (length - len(src))])
    d = torch.tensor([dec + [PAD] * (length - len(dec))])
    was_training = model.training
    model.eval()  # no dropout while re-scoring
    with torch.no_grad():
        logits = model(s, d, _src_mask(s), _tgt_mask(d))
    model.train(was_training)
    top2 = logits[0, : len(dec)].topk(2, dim=-1).values
    return logits[0, : len(dec)], top2[:, 0] - top2[:, 1]


def _assert_same_up_to_ties(model, srcs, fast, generic):
    """Equal outputs, except where the first difference is a near-tie for the model."""
    for src, a, b in zip(srcs, fast, generic, strict=True):
        if a == b:
            continue
        k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        _, margin = _rescore(model, src, a[:k])
        assert margin[k] < TIE, f"fast {a} vs generic {b} differ at {k} with margin {margin[k]:.4g}"


def _assert_is_greedy(model, srcs, outs):
    """Each output is the argmax of the model given its own prefix (independent of both decoders)."""
    for src, out in zip(srcs, outs, strict=True):
        logits, margin = _rescore(model, src, out)
        produced = out + ([EOS] if len(out) < MAX_NEW else [])
        for i, tok in enumerate(produced):
            assert tok == int(logits[i].argmax()) or margin[i] < TIE


def _train_copy_model() -> Transformer:
    """A tiny model trained briefly to copy the source: large argmax margins, real <eos> stops."""
    torch.manual_seed(0)
    model = Transformer({"de": V_SRC, "en": V_TGT}, 16, 32, 64, 4, 2, 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    crit = nn.CrossEntropyLoss(reduction="none")
    srcs = _sources(2000, seed=1)
    for step in range(120):
        batch = srcs[(step * 64) % 1936 :][:64]
        length = max(map(len, batch))
        src = torch.tensor([s + [PAD] * (length - len(s)) for s in batch])
        tgt = torch.where(src >= V_TGT, src - 8, src)  # map source ids into the target vocabulary
        logits = model(src, tgt, _src_mask(src), _tgt_mask(tgt))
        loss = calculate_loss(logits, tgt, crit)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


@pytest.fixture(scope="module")
def trained() -> Transformer:
    return _train_copy_model()


def test_random_model_fast_equals_generic():
    torch.manual_seed(1)
    model = Transformer({"de": V_SRC, "en": V_TGT}, 16, 32, 64, 4, 2, 0.1)
    srcs = _sources(40, seed=2)
    fast = fast_greedy_translate(model, srcs, max_new_tokens=MAX_NEW, batch_size=16)
    generic = _generic(model, srcs, batch_size=16)
    _assert_same_up_to_ties(model, srcs, fast, generic)
    _assert_is_greedy(model, srcs, fast)
    assert model.training  # mode restored


def test_trained_model_fast_equals_generic(trained):
    srcs = _sources(60, seed=3)
    fast = fast_greedy_translate(trained, srcs, max_new_tokens=MAX_NEW, batch_size=8)
    generic = _generic(trained, srcs, batch_size=8)
    _assert_same_up_to_ties(trained, srcs, fast, generic)
    _assert_is_greedy(trained, srcs, fast)
    # The model learned to stop: most outputs end well before the limit.
    assert sum(len(o) < MAX_NEW for o in fast) >= 0.8 * len(fast)


def test_model_emitting_pad_tokens():
    # Generated <pad> tokens are hidden as keys by the look-ahead mask; the cache must do the same.
    torch.manual_seed(4)
    model = Transformer({"de": V_SRC, "en": V_TGT}, 16, 32, 64, 4, 2, 0.0).eval()
    with torch.no_grad():
        model.decoder.dense_layer.bias[PAD] += 1.5
        model.decoder.dense_layer.bias[EOS] -= 3.0
    srcs = _sources(30, seed=5)
    fast = fast_greedy_translate(model, srcs, max_new_tokens=MAX_NEW)
    assert any(PAD in o for o in fast) and any(set(o) - {PAD} for o in fast)
    _assert_same_up_to_ties(model, srcs, fast, _generic(model, srcs))
    _assert_is_greedy(model, srcs, fast)


def test_order_and_batch_size_independence(trained):
    srcs = _sources(25, seed=6)
    one_batch = fast_greedy_translate(trained, srcs, max_new_tokens=MAX_NEW, batch_size=512)
    singles = fast_greedy_translate(trained, srcs, max_new_tokens=MAX_NEW, batch_size=1)
    _assert_same_up_to_ties(trained, srcs, one_batch, singles)
    reversed_out = fast_greedy_translate(trained, srcs[::-1], max_new_tokens=MAX_NEW)
    assert reversed_out[::-1] == one_batch


def test_max_new_tokens_beyond_positional_table_is_rejected(trained):
    with pytest.raises(ValueError, match="positional table"):
        fast_greedy_translate(trained, _sources(2, seed=7), max_new_tokens=17)


def _never_stops() -> Transformer:
    """A model that never emits <eos> (the buggy example's failure): every row runs to its limit."""
    torch.manual_seed(9)
    model = Transformer({"de": V_SRC, "en": V_TGT}, 16, 32, 64, 4, 2, 0.0).eval()
    with torch.no_grad():
        model.decoder.dense_layer.bias[EOS] = -1e4
    return model


def test_length_cap_stops_a_model_that_never_emits_eos():
    model, srcs, cap = _never_stops(), _sources(40, seed=10), LengthCap(ratio=1.0, slack=2)
    uncapped = fast_greedy_translate(model, srcs, max_new_tokens=MAX_NEW, batch_size=16)
    capped = fast_greedy_translate(model, srcs, max_new_tokens=MAX_NEW, batch_size=16, length_cap=cap)
    assert all(len(o) == MAX_NEW for o in uncapped)  # without a cap: the whole limit, every sentence
    for src, short, full in zip(srcs, capped, uncapped, strict=True):
        assert len(short) == min(MAX_NEW, len(src) + 2)  # ceil(1.0 * len) + 2, within max_new_tokens
        assert short == full[: len(short)]  # the same tokens, up to the cap
    assert sum(map(len, capped)) < 0.8 * sum(map(len, uncapped))


def test_length_cap_leaves_sentences_that_stop_in_time_unchanged(trained):
    srcs = _sources(60, seed=3)
    # The copy model's outputs are as long as their sources: a cap of 1.5 x length + 2 never cuts them.
    capped = fast_greedy_translate(trained, srcs, max_new_tokens=MAX_NEW, length_cap=LengthCap(1.5, 2))
    assert capped == fast_greedy_translate(trained, srcs, max_new_tokens=MAX_NEW)


def test_length_cap_tokens():
    assert LengthCap(1.5, 5).tokens(10, 50) == 20
    assert LengthCap(1.5, 5).tokens(40, 50) == 50  # never beyond max_new_tokens
    assert LengthCap(0.0, 0).tokens(3, 50) == 1  # at least one token


def _original_quirk_forward(self, query, key, value, mask=None):
    # The template's MultiHeadAttention: key and value are reshaped with the QUERY's length.
    b, n, _ = query.shape

    def split(x):
        return x.reshape(b, n, self.num_heads, self.attention_dim).transpose(1, 2)

    heads = self.scaled_dot_product_attention(split(self.Wq(query)), split(self.Wk(key)), split(self.Wv(value)), mask)
    return self.Wo(heads.transpose(1, 2).reshape(b, n, -1))


def test_generic_decoder_drives_a_model_with_the_original_quirk(trained):
    quirky = copy.deepcopy(trained)
    for module in quirky.modules():
        if isinstance(module, MultiHeadAttention):
            # Replacing the bound method is the point: the original notebook's quirky forward.
            module.forward = types.MethodType(_original_quirk_forward, module)  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):  # the quirk is really active: unequal lengths break it
        quirky.decoder.decoder_layers[0].enc_dec_attention(torch.randn(1, 3, 32), torch.randn(1, 5, 32), None)
    srcs = _sources(30, seed=8)
    fast = fast_greedy_translate(trained, srcs, max_new_tokens=MAX_NEW)
    _assert_same_up_to_ties(trained, srcs, fast, _generic(quirky, srcs))
