"""Tests for mtkit.decoding.greedy_translate with toy models (no reference solution involved)."""

import inspect
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from mtkit.decoding import greedy_translate

SOS, EOS, PAD = 1, 2, 3
V = 12


def pad_mask(batch: Tensor, pad_idx: int) -> Tensor:
    b, n = batch.shape
    return (batch != pad_idx)[:, None, None, :].expand(b, 1, n, n)


def causal_mask(batch: Tensor, pad_idx: int) -> Tensor:
    # Deliberately int, like the original template's look-ahead mask.
    n = batch.size(1)
    return (torch.ones(n, n).tril().bool()[None, None] & (batch != pad_idx)[:, None, None, :]).to(torch.int)


class CopyModel(nn.Module):
    """Decoder position i predicts source token i + 1, read through the encoder output.

    So greedy decoding of <sos> w1 .. wn <eos> yields w1 .. wn, then stops. It records every
    call and checks the assignment's equal-length contract.
    """

    def __init__(self) -> None:
        super().__init__()
        self.dummy = nn.Parameter(torch.zeros(1))
        self.calls: list[dict] = []

    def encoder(self, src: Tensor, src_mask: Tensor) -> Tensor:
        self.calls.append({"kind": "enc", "len": src.size(1)})
        return nn.functional.one_hot(src, V).float()  # (B, L, V)

    def decoder(self, dec: Tensor, enc: Tensor, src_mask: Tensor, trg_mask: Tensor) -> Tensor:
        b, n = dec.shape
        assert enc.shape[:2] == (b, n), "source encoding and decoder input must share one length"
        assert src_mask.shape == trg_mask.shape == (b, 1, n, n)
        self.calls.append(
            {"kind": "dec", "dec": dec.clone(), "trg_mask": trg_mask.clone(), "training": self.training,
             "inference": torch.is_inference_mode_enabled()}
        )  # fmt: skip
        # Shift the one-hot source left by one: position i scores source token i + 1 (pad past the end).
        nxt = torch.cat([enc[:, 1:], nn.functional.one_hot(torch.full((b, 1), PAD), V).float()], dim=1)
        return nxt * 10.0 + self.dummy


class PeekingModel(CopyModel):
    """Ignores every mask and outputs the token that follows each position in `dec` (a cheater).

    With teacher forcing it would reproduce any target perfectly; under honest greedy decoding
    the next position holds only padding, so it can only emit <eos>.
    """

    def decoder(self, dec: Tensor, enc: Tensor, src_mask: Tensor, trg_mask: Tensor) -> Tensor:
        ahead = torch.cat([dec[:, 1:], torch.full((dec.size(0), 1), PAD)], dim=1)
        ahead = torch.where(ahead == PAD, torch.full_like(ahead, EOS), ahead)
        return nn.functional.one_hot(ahead, V).float() + self.dummy


def _srcs() -> list[list[int]]:
    return [[SOS, 5, 6, 7, EOS], [SOS, EOS], [SOS, 8, EOS], [SOS, 9, 10, 11, 4, 5, 6, EOS], [SOS, 4, EOS]]


def _translate(model, srcs, **kw):
    kw.setdefault("max_new_tokens", 12)
    return greedy_translate(model, srcs, src_mask_fn=pad_mask, tgt_mask_fn=causal_mask, **kw)


def test_copies_and_restores_input_order():
    srcs = _srcs()
    for batch_size in (1, 2, 128):
        assert _translate(CopyModel(), srcs, batch_size=batch_size) == [s[1:-1] for s in srcs]


def test_signature_takes_no_targets():
    params = inspect.signature(greedy_translate).parameters
    assert not any(word in name for name in params for word in ("tgt_seq", "target", "ref"))
    assert list(params)[:2] == ["model", "src_seqs"]


def test_decoder_input_is_only_what_was_generated():
    model = CopyModel()
    srcs = _srcs()
    outs = _translate(model, srcs, batch_size=128)
    decs = [c for c in model.calls if c["kind"] == "dec"]
    by_len = sorted(outs, key=len, reverse=True)
    for step, call in enumerate(decs):
        dec = call["dec"]
        assert torch.all(dec[:, 0] == SOS)
        assert torch.all(dec[:, step + 1 :] == PAD)  # nothing beyond the generated prefix
        for row in dec[:, 1 : step + 1].tolist():  # the prefix is some sentence's own output so far
            assert any(row == ([*o, EOS])[:step] for o in by_len)
        # The look-ahead mask came from the caller's function applied to this very input.
        assert torch.equal(call["trg_mask"], causal_mask(dec, PAD))


def test_stops_when_all_emitted_eos_and_drops_finished_rows():
    model = CopyModel()
    srcs = _srcs()
    _translate(model, srcs, max_new_tokens=40)
    decs = [c for c in model.calls if c["kind"] == "dec"]
    longest = max(len(s) - 2 for s in srcs)
    assert len(decs) == longest + 1  # +1 for the step that emits the last <eos>
    sizes = [c["dec"].size(0) for c in decs]
    assert sizes[0] == len(srcs) and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True)


def test_encodes_once_per_batch():
    model = CopyModel()
    _translate(model, _srcs(), batch_size=2)
    assert sum(c["kind"] == "enc" for c in model.calls) == 3


def test_peeking_model_gets_nothing_to_peek_at():
    assert _translate(PeekingModel(), _srcs()) == [[] for _ in _srcs()]


def test_max_new_tokens_caps_sentences_without_eos():
    class NeverStops(CopyModel):
        def decoder(self, dec, enc, src_mask, trg_mask):
            return nn.functional.one_hot(torch.full(dec.shape, 7), V).float() + self.dummy

    assert _translate(NeverStops(), _srcs()[:2], max_new_tokens=5) == [[7] * 5, [7] * 5]


def test_eval_and_inference_mode_and_mode_restored():
    model = CopyModel().train()
    _translate(model, _srcs())
    decs = [c for c in model.calls if c["kind"] == "dec"]
    assert all(not c["training"] and c["inference"] for c in decs)
    assert model.training


def test_rejects_zero_new_tokens():
    with pytest.raises(ValueError):
        _translate(CopyModel(), _srcs(), max_new_tokens=0)


class TinySeq2Seq(nn.Module):
    """A small trainable-style model whose decoder ends in an nn.Linear (like the assignment's)."""

    def __init__(self, scale_output: bool = False) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb_src, self.emb_tgt = nn.Embedding(V, 16), nn.Embedding(V, 16)
        self.mix, self.out = nn.Linear(32, 16), nn.Linear(16, V)
        self.scale_output = scale_output  # True: the returned tensor is not the Linear's own output
        self.out_lengths: list[int] = []
        self.out.register_forward_hook(lambda module, args, output: self.out_lengths.append(args[0].size(1)))

    def encoder(self, src: Tensor, src_mask: Tensor) -> Tensor:
        return self.emb_src(src)

    def decoder(self, dec: Tensor, enc: Tensor, src_mask: Tensor, trg_mask: Tensor) -> Tensor:
        seen = trg_mask[:, 0].float()  # (B, L, L): causal average of the target embeddings
        h = seen @ self.emb_tgt(dec) / seen.sum(-1, keepdim=True).clamp(min=1)
        keys = src_mask[:, 0].float()  # (B, L, L): average of the non-pad source positions
        context = keys @ enc / keys.sum(-1, keepdim=True).clamp(min=1)
        logits = self.out(torch.tanh(self.mix(torch.cat([h, context], dim=-1))))
        return logits * 1.0 if self.scale_output else logits


def test_output_layer_runs_on_the_last_position_only_and_tokens_are_unchanged():
    sources = [[SOS, 4, 5, 6, 7, 8, EOS], [SOS, 9, EOS], [SOS, 10, 11, 4, EOS], [SOS, 6, 6, 6, 6, 6, 6, 6, EOS]]
    fast, full = TinySeq2Seq(), TinySeq2Seq(scale_output=True)
    kwargs: dict[str, Any] = dict(src_mask_fn=pad_mask, tgt_mask_fn=causal_mask, max_new_tokens=12, pad_idx=PAD)
    assert greedy_translate(fast, sources, **kwargs) == greedy_translate(full, sources, **kwargs)
    assert fast.out_lengths[0] == 9 and set(fast.out_lengths[1:]) == {1}  # first step finds the layer
    assert min(full.out_lengths) == 9  # the decoder's output is not the Linear's: every step in full


def test_output_layer_is_found_once_per_call_and_kept_for_every_batch():
    sources = [[SOS, 4, 5, 6, 7, 8, EOS], [SOS, 9, EOS], [SOS, 10, 11, 4, EOS], [SOS, 6, 6, 6, 6, 6, 6, 6, EOS]]
    fast, full = TinySeq2Seq(), TinySeq2Seq(scale_output=True)
    kwargs: dict[str, Any] = dict(
        src_mask_fn=pad_mask, tgt_mask_fn=causal_mask, max_new_tokens=12, pad_idx=PAD, batch_size=1
    )
    assert greedy_translate(fast, sources, **kwargs) == greedy_translate(full, sources, **kwargs)
    # Four batches: only the very first step of the call computes the logits of every position.
    assert fast.out_lengths[0] == 9 and set(fast.out_lengths[1:]) == {1}
    assert min(full.out_lengths) >= 3  # the shortest source (<sos> w <eos>) sets the least length


def test_encoded_at_the_source_length_then_once_more_at_full_length_past_it():
    class NeverStops(CopyModel):
        def decoder(self, dec, enc, src_mask, trg_mask):
            super().decoder(dec, enc, src_mask, trg_mask)  # records the call, checks the lengths
            return nn.functional.one_hot(torch.full(dec.shape, 7), V).float() + self.dummy

    model = NeverStops()
    assert _translate(model, _srcs()[:2], max_new_tokens=8) == [[7] * 8, [7] * 8]
    assert [c["len"] for c in model.calls if c["kind"] == "enc"] == [5, 8]
    # Steps 1-5 run at the source length 5, steps 6-8 at the decoder input's own length.
    assert [c["dec"].size(1) for c in model.calls if c["kind"] == "dec"] == [5] * 5 + [6, 7, 8]


class KeyProjectionSeq2Seq(TinySeq2Seq):
    """TinySeq2Seq that projects the source encoding with an nn.Linear (like attention keys)."""

    def __init__(self, plain_layer: bool = True) -> None:
        super().__init__()
        # A subclass of nn.Linear is not a plain Linear: greedy_translate then never reuses its outputs.
        self.key = nn.Linear(16, 16) if plain_layer else type("OwnLinear", (nn.Linear,), {})(16, 16)
        self.key.load_state_dict(nn.Linear(16, 16).state_dict())
        self.key_inputs: list[tuple[int, int]] = []  # (rows, length) of each computed projection
        computed = self.key.forward

        def counting(x: Tensor) -> Tensor:  # an instance-level forward, as a user might set one
            self.key_inputs.append((x.size(0), x.size(1)))
            return computed(x)

        self.key.forward = counting  # type: ignore[method-assign]

    def decoder(self, dec: Tensor, enc: Tensor, src_mask: Tensor, trg_mask: Tensor) -> Tensor:
        keys = self.key(enc)
        keys.mul_(0.5)  # in place: the caller owns what the layer returned
        return super().decoder(dec, keys, src_mask, trg_mask)


def test_encoding_projection_computed_once_per_batch_as_rows_finish_and_tokens_unchanged():
    torch.manual_seed(1)
    sources = [[SOS, *torch.randint(4, V, (n,)).tolist(), EOS] for n in (6, 6, 5, 5, 4, 3)]
    reused, plain = KeyProjectionSeq2Seq(), KeyProjectionSeq2Seq(plain_layer=False)
    plain.load_state_dict(reused.state_dict())
    kwargs: dict[str, Any] = dict(src_mask_fn=pad_mask, tgt_mask_fn=causal_mask, max_new_tokens=12, pad_idx=PAD)
    assert greedy_translate(reused, sources, **kwargs) == greedy_translate(plain, sources, **kwargs)
    at_source_length = [shape for shape in reused.key_inputs if shape[1] == 8]
    # The one-row probe of the first step, then the whole batch once; rows finishing reuse it.
    assert at_source_length == [(1, 8), (6, 8)]
    assert len([shape for shape in plain.key_inputs if shape[1] == 8]) > 2  # every step, as it is
    assert reused.key.forward.__name__ == "counting"  # the model's own forward is back afterwards
