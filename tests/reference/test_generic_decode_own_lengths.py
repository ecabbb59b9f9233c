"""greedy_translate(own_lengths=True), for a MultiHeadAttention that reshapes key and value with
their own length (the template's and the reference's): the same tokens as the equal-length path,
with the decoder run over only the t + 1 positions generated so far."""

import pytest
import torch
from test_fast_decode import EOS, MAX_NEW, PAD, SOS, V_SRC, V_TGT, _sources, _train_copy_model
from test_generic_decode_shortcuts import plain_greedy
from torch import Tensor, nn

from assignments.transformer_mt.reference.masks import (
    create_look_ahead_mask_for_attention,
    create_padding_mask_for_attention,
)
from assignments.transformer_mt.reference.model import Transformer
from mtkit.decoding import greedy_translate


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def trained() -> Transformer:
    return _train_copy_model()


def _decode(model: nn.Module, srcs: list[list[int]], batch_size: int, own_lengths: bool) -> list[list[int]]:
    return greedy_translate(
        model,
        srcs,
        src_mask_fn=create_padding_mask_for_attention,
        tgt_mask_fn=create_look_ahead_mask_for_attention,
        max_new_tokens=MAX_NEW,
        batch_size=batch_size,
        pad_idx=PAD,
        own_lengths=own_lengths,
    )


@pytest.mark.parametrize("batch_size", [7, 64])
def test_own_lengths_change_no_token(trained, batch_size):
    srcs = _sources(90, seed=5)
    own = _decode(trained, srcs, batch_size, own_lengths=True)
    assert own == plain_greedy(trained, srcs, batch_size)
    assert sum(len(o) < MAX_NEW for o in own) >= 0.8 * len(own)  # real <eos> stops, not all max length


def _decoder_input_lengths(model: Transformer, srcs: list[list[int]], own_lengths: bool) -> list[int]:
    lengths: list[int] = []

    def record(module: nn.Module, args: tuple[Tensor, ...]) -> None:
        lengths.append(int(args[0].size(1)))  # dec (b, length)

    handle = model.decoder.register_forward_pre_hook(record)
    try:
        _decode(model, srcs, 4, own_lengths)
    finally:
        handle.remove()
    return lengths


def test_the_decoder_runs_over_the_generated_positions_only(trained):
    srcs = [[SOS, 4, 5, 6, 7, 8, 9, 10, 11, EOS]] * 4  # source length 10
    out = _decode(trained, srcs, 4, own_lengths=True)
    assert out == _decode(trained, srcs, 4, own_lengths=False)
    steps = len(out[0]) + 1  # the tokens, then <eos>
    assert 3 <= steps < MAX_NEW and all(o == out[0] for o in out)  # a real <eos> stop before the source ends
    # The first call of each run finds the output layer on one row (same length as step 0).
    own = _decoder_input_lengths(trained, srcs, own_lengths=True)
    equal = _decoder_input_lengths(trained, srcs, own_lengths=False)
    assert own == [1, *range(1, steps + 1)]
    assert equal == [10] * (steps + 1)  # max(source length, t + 1)


def test_a_query_length_model_needs_the_equal_length_path():
    """The original class (key and value reshaped with the query's length) fails with own lengths
    where source and decoder input differ; the default path still serves it."""

    class QueryLengthAttention(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
            length = query.size(1)
            if key.size(1) != length:  # what the original's view(batch, query_length, ...) does
                raise RuntimeError("shape is invalid for input of size")
            out: Tensor = self.inner(query, key, value, mask)
            return out

    torch.manual_seed(3)
    model = Transformer({"de": V_SRC, "en": V_TGT}, 16, 32, 64, 4, 2, 0.0)
    for layer in model.decoder.decoder_layers:
        assert isinstance(layer.enc_dec_attention, nn.Module)
        layer.enc_dec_attention = QueryLengthAttention(layer.enc_dec_attention)
    srcs = _sources(12, seed=6)
    assert _decode(model, srcs, 4, own_lengths=False) == plain_greedy(model, srcs, 4)
    with pytest.raises(RuntimeError, match="shape is invalid"):
        _decode(model, srcs, 4, own_lengths=True)
