"""mtkit.decoding's shortcuts (output layer found once per call, the encoding's projections reused
between steps, encoding at the batch's source length) change no token and no BLEU: compared with
a plain loop on the reference Transformer that encodes at the full length every time."""

import pytest
import torch
from test_fast_decode import EOS, MAX_NEW, PAD, SOS, V_SRC, V_TGT, _sources, _train_copy_model
from torch import Tensor, nn

from assignments.transformer_mt.reference.masks import (
    create_look_ahead_mask_for_attention,
    create_padding_mask_for_attention,
)
from assignments.transformer_mt.reference.model import Transformer
from mtkit.bleu import corpus_bleu
from mtkit.decoding import greedy_translate


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def plain_greedy(model: Transformer, srcs: list[list[int]], batch_size: int) -> list[list[int]]:
    """The same batches and lengths as greedy_translate, without any shortcut: every step runs
    the whole decoder and reads its full logits."""
    order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]), reverse=True)
    results: list[list[int]] = [[] for _ in srcs]
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            batch = [srcs[i] for i in idx]
            src_len = max(map(len, batch))
            full = max(src_len, MAX_NEW)
            src = torch.tensor([s + [PAD] * (full - len(s)) for s in batch])
            enc = model.encoder(src, create_padding_mask_for_attention(src, PAD))
            gen = torch.full((len(batch), MAX_NEW + 1), PAD)
            gen[:, 0] = SOS
            rows, act_src, act_enc = torch.arange(len(batch)), src, enc
            for step in range(MAX_NEW):
                cur, length = step + 1, max(src_len, step + 1)
                dec = torch.full((rows.numel(), length), PAD)
                dec[:, :cur] = gen[rows, :cur]
                s = act_src[:, :length]
                logits = model.decoder(
                    dec,
                    act_enc[:, :length],
                    create_padding_mask_for_attention(s, PAD),
                    create_look_ahead_mask_for_attention(dec, PAD),
                )
                nxt = logits[:, cur - 1].argmax(dim=-1)
                gen[rows, cur] = nxt
                alive = nxt != EOS
                if not bool(alive.any()):
                    break
                rows, act_src, act_enc = rows[alive], act_src[alive], act_enc[alive]
            for i, row in zip(idx, gen[:, 1:].tolist(), strict=True):
                results[i] = row[: row.index(EOS)] if EOS in row else row
    return results


def _generic(model, srcs, batch_size):
    return greedy_translate(
        model,
        srcs,
        src_mask_fn=create_padding_mask_for_attention,
        tgt_mask_fn=create_look_ahead_mask_for_attention,
        max_new_tokens=MAX_NEW,
        batch_size=batch_size,
        pad_idx=PAD,
    )


def _bleu(outputs: list[list[int]], srcs: list[list[int]]) -> float:
    # The copy task's reference is the source mapped into the target vocabulary (as in training).
    refs = [[str(t - 8 if t >= V_TGT else t) for t in s[1:-1]] for s in srcs]
    return corpus_bleu([[str(t) for t in out] for out in outputs], refs)


@pytest.fixture(scope="module")
def trained() -> Transformer:
    return _train_copy_model()


@pytest.mark.parametrize("batch_size", [7, 64])
def test_shortcuts_change_no_token_and_no_bleu(trained, batch_size):
    srcs = _sources(90, seed=5)
    plain, generic = plain_greedy(trained, srcs, batch_size), _generic(trained, srcs, batch_size)
    assert generic == plain
    assert _bleu(generic, srcs) == _bleu(plain, srcs) > 0.5
    assert sum(len(o) < MAX_NEW for o in generic) >= 0.8 * len(generic)  # real <eos> stops


def test_random_model_without_eos_changes_no_token():
    torch.manual_seed(3)
    model = Transformer({"de": V_SRC, "en": V_TGT}, 16, 32, 64, 4, 2, 0.0)
    srcs = _sources(30, seed=6)
    assert _generic(model, srcs, 8) == plain_greedy(model, srcs, 8)


def test_the_encodings_projections_are_computed_once_per_view(trained, monkeypatch):
    calls: list[int] = []  # id() of the Linear layer of each call
    plain_forward = nn.Linear.forward

    def counting(self: nn.Linear, x: Tensor) -> Tensor:
        calls.append(id(self))
        return plain_forward(self, x)

    monkeypatch.setattr(nn.Linear, "forward", counting)
    # The encoder-decoder attention's key and value projections: they only ever see the encoding.
    encoding_projections = [
        id(projection)
        for layer in trained.decoder.decoder_layers
        for projection in (layer.enc_dec_attention.Wk, layer.enc_dec_attention.Wv)
    ]
    srcs = [[SOS, 4, 5, 6, 7, 8, 9, 10, 11, EOS]] * 4  # one length: the view changes only as rows end
    plain = plain_greedy(trained, srcs, 4)
    plain_counts = [calls.count(p) for p in encoding_projections]
    calls.clear()
    out = _generic(trained, srcs, 4)
    # The tiny model copies the source; how many tokens it gets right before <eos> depends on
    # torch's kernels (thread count, earlier tests), so the step count is read off the plain loop.
    assert out == plain and all(len(row) >= 4 for row in out), out
    generic_counts = [calls.count(p) for p in encoding_projections]
    # The plain loop projects the encoding at every step (one per token, plus the <eos> step);
    # here once for the batch (plus once for the one-sentence step that finds the output layer).
    steps = len(out[0]) + 1
    assert plain_counts == [steps] * len(encoding_projections)
    assert all(count <= 2 for count in generic_counts), generic_counts
    # Linear's own attributes are untouched afterwards (no wrapper left behind).
    assert all("forward" not in m.__dict__ for m in trained.modules())
