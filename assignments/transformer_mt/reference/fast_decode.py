"""Fast greedy decoder for the reference Transformer: cached keys/values, shrinking batch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor

from mtkit.constants import DEFAULT_MAX_LENGTH, EOS_IDX, PAD_IDX, SOS_IDX
from mtkit.decoding import decode_in_length_order

from .masks import create_padding_mask_for_attention
from .model import DecoderLayer, LayerNormalization, Transformer

# Same tokens as mtkit.decoding.greedy_translate with the reference masks (up to float noise in
# near-ties), computed incrementally: the encoder runs once per batch, each decoder layer's
# cross-attention keys/values are projected once, and self-attention keeps a key/value cache so
# that each step only computes the newest position. Finished rows are dropped in chunks.
# With a `LengthCap`, a row also stops at its source's cap: the tokens are then the same up to that
# cap, and a model that never emits <eos> costs at most the cap per sentence, not max_new_tokens.


@dataclass(frozen=True)
class LengthCap:
    """Most tokens generated for a source of n ids (<sos>/<eos> included): ceil(ratio * n) + slack."""

    ratio: float
    slack: int

    def tokens(self, source_len: int, max_new_tokens: int) -> int:
        """Args: source_len, the source's ids; max_new_tokens, the overall limit. Returns: the row's limit."""
        return max(1, min(max_new_tokens, math.ceil(self.ratio * source_len) + self.slack))


@dataclass
class _LayerWeights:
    """One decoder layer's weights, with the projections that are applied together fused."""

    self_qkv_w: Tensor  # (3d, d): rows Wq, Wk, Wv of the masked self-attention
    self_qkv_b: Tensor
    self_o_w: Tensor
    self_o_b: Tensor
    cross_q_w: Tensor
    cross_q_b: Tensor
    cross_kv_w: Tensor  # (2d, d): rows Wk, Wv of the encoder-decoder attention
    cross_kv_b: Tensor
    cross_o_w: Tensor
    cross_o_b: Tensor
    ff1_w: Tensor
    ff1_b: Tensor
    ff2_w: Tensor
    ff2_b: Tensor
    norms: tuple[LayerNormalization, LayerNormalization, LayerNormalization]


def _decoder_layers(model: Transformer) -> list[DecoderLayer]:
    """The decoder's layers (an nn.ModuleList, which types its items as plain modules)."""
    return [cast(DecoderLayer, layer) for layer in model.decoder.decoder_layers]


def _layer_weights(layer: DecoderLayer) -> _LayerWeights:
    sa, ca, ff = layer.masked_multi_head_attention, layer.enc_dec_attention, layer.feed_forward_neural_network
    return _LayerWeights(
        torch.cat([sa.Wq.weight, sa.Wk.weight, sa.Wv.weight]), torch.cat([sa.Wq.bias, sa.Wk.bias, sa.Wv.bias]),
        sa.Wo.weight, sa.Wo.bias,
        ca.Wq.weight, ca.Wq.bias,
        torch.cat([ca.Wk.weight, ca.Wv.weight]), torch.cat([ca.Wk.bias, ca.Wv.bias]),
        ca.Wo.weight, ca.Wo.bias,
        ff.W1.weight, ff.W1.bias, ff.W2.weight, ff.W2.bias,
        (layer.norm1, layer.norm2, layer.norm3),
    )  # fmt: skip


def _norm(module: LayerNormalization, x: Tensor) -> Tensor:
    ln = module.layer_norm
    return F.layer_norm(x, ln.normalized_shape, ln.weight, ln.bias, ln.eps)


def _attend(q: Tensor, k: Tensor, v: Tensor, key_ok: Tensor, scale: float) -> Tensor:
    # q (b, h, 1, dk); k/v (b, h, S, dk); key_ok (b, 1, 1, S) bool. Same masking as the model.
    scores = torch.matmul(q, k.transpose(-2, -1)) / scale
    scores = scores.masked_fill(~key_ok, -1e10)
    return torch.matmul(torch.softmax(scores, dim=-1), v)  # (b, h, 1, dk)


def fast_greedy_translate(
    model: Transformer,
    src_seqs: Sequence[Sequence[int]],
    *,
    max_new_tokens: int = DEFAULT_MAX_LENGTH,
    batch_size: int = 512,
    length_cap: LengthCap | None = None,
) -> list[list[int]]:
    """Greedy-translate with the reference's `model.Transformer` (or any module with its exact layout),
    on the model's device, with the course's special ids (mtkit.constants).

    Args:
        model: the reference Transformer (its weights are read; dropout is never applied).
        src_seqs: source id sequences with `<sos>`/`<eos>`, as in training.
        max_new_tokens: most tokens generated per sentence, `<eos>` included.
        batch_size: sentences per batch, sorted by source length, longest first.
        length_cap: also stop each sentence at its source's cap (None: only max_new_tokens).

    Returns:
        One id list per source, in input order, without `<sos>`, cut before the first `<eos>`
        (and at the sentence's cap).
    """
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    device = next(model.parameters()).device
    with torch.inference_mode():  # the fused weights, once per call (no autograd history)
        layers = [_layer_weights(layer) for layer in _decoder_layers(model)]
    return decode_in_length_order(
        model,
        src_seqs,
        batch_size,
        lambda batch: _decode_batch(model, layers, batch, max_new_tokens, device, length_cap),
    )


def _decode_batch(
    model: Transformer,
    layers: list[_LayerWeights],
    srcs: list[Sequence[int]],
    max_new_tokens: int,
    device: torch.device,
    length_cap: LengthCap | None,
) -> list[list[int]]:
    n = len(srcs)
    # Each row's own limit (n,); the batch runs as many steps as its largest.
    caps = [length_cap.tokens(len(s), max_new_tokens) if length_cap else max_new_tokens for s in srcs]
    row_cap = torch.tensor(caps, device=device)
    steps = max(caps)
    src_len = max(1, max(len(s) for s in srcs))
    src = torch.full((n, src_len), PAD_IDX, dtype=torch.long)
    for row, seq in enumerate(srcs):
        src[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    src = src.to(device)
    enc = _encode(model, src, srcs)  # (n, S, d)

    emb = model.decoder.transformer_embedding
    tok_w = emb.tok_emb.weight  # (V, d)
    pe = emb.pos_emb.positional_encoding.to(device)  # (max_len, d)
    if max_new_tokens > pe.size(0):
        raise ValueError(f"max_new_tokens {max_new_tokens} exceeds the positional table ({pe.size(0)})")
    dense = model.decoder.dense_layer
    d = tok_w.size(1)
    h = _decoder_layers(model)[0].masked_multi_head_attention.num_heads if layers else 1
    dk = d // h
    scale = math.sqrt(dk)

    # Per layer: cross-attention K/V (n, h, S, dk), projected once from the encoder output.
    cross_kv = []
    for w in layers:
        kv = F.linear(enc, w.cross_kv_w, w.cross_kv_b).view(n, src_len, 2, h, dk).permute(2, 0, 3, 1, 4)
        # Contiguous once here, or every step's matmul would copy them again.
        cross_kv.append((kv[0].contiguous(), kv[1].contiguous()))
    cross_ok = (src != PAD_IDX)[:, None, None, :]  # (n, 1, 1, S)
    # Self-attention caches (n, h, T, dk); self_ok[:, j] = generated token j is not <pad>
    # (the look-ahead mask hides pad keys, and a model may emit <pad>).
    self_k = [torch.empty(n, h, steps, dk, device=device) for _ in layers]
    self_v = [torch.empty(n, h, steps, dk, device=device) for _ in layers]
    self_ok = torch.empty(n, steps, dtype=torch.bool, device=device)

    gen = torch.full((n, steps), PAD_IDX, dtype=torch.long, device=device)
    rows = torch.arange(n, device=device)  # original row of each active row
    done = torch.zeros(n, dtype=torch.bool, device=device)  # per active row: has emitted <eos>
    y = torch.full((n,), SOS_IDX, dtype=torch.long, device=device)  # decoder input at this step
    for t in range(steps):
        b = rows.numel()
        x = F.embedding(y, tok_w) + pe[t]  # (b, d)
        self_ok[:, t] = y != PAD_IDX
        ok = self_ok[:, None, None, : t + 1]  # (b, 1, 1, t+1)
        for li, w in enumerate(layers):
            qkv = F.linear(x, w.self_qkv_w, w.self_qkv_b).view(b, 3, h, 1, dk)
            self_k[li][:, :, t] = qkv[:, 1, :, 0]
            self_v[li][:, :, t] = qkv[:, 2, :, 0]
            a = _attend(qkv[:, 0], self_k[li][:, :, : t + 1], self_v[li][:, :, : t + 1], ok, scale)
            x = _norm(w.norms[0], F.linear(a.reshape(b, d), w.self_o_w, w.self_o_b) + x)
            q = F.linear(x, w.cross_q_w, w.cross_q_b).view(b, h, 1, dk)
            a = _attend(q, cross_kv[li][0], cross_kv[li][1], cross_ok, scale)
            x = _norm(w.norms[1], F.linear(a.reshape(b, d), w.cross_o_w, w.cross_o_b) + x)
            f = F.linear(F.relu(F.linear(x, w.ff1_w, w.ff1_b)), w.ff2_w, w.ff2_b)
            x = _norm(w.norms[2], f + x)
        y = F.linear(x, dense.weight, dense.bias).argmax(dim=-1)  # (b,)
        gen[rows, t] = y
        done |= (y == EOS_IDX) | (row_cap[rows] <= t + 1)
        n_done = int(done.sum())
        if n_done == b:
            break
        # Drop finished rows once they are worth a copy of the live cache prefix; until then they
        # keep decoding harmlessly (rows are independent, and output is cut at the first <eos>).
        if n_done * 8 >= b:
            keep = (~done).nonzero().squeeze(1)
            rows, y, done, cross_ok = rows[keep], y[keep], done[keep], cross_ok[keep]
            self_ok = _compact(self_ok, keep, t + 1, dim=1)
            cross_kv = [(k[keep], v[keep]) for k, v in cross_kv]
            self_k = [_compact(c, keep, t + 1, dim=2) for c in self_k]
            self_v = [_compact(c, keep, t + 1, dim=2) for c in self_v]
    out = []
    for row, cap in zip(gen.tolist(), caps, strict=True):
        row = row[:cap]
        out.append(row[: row.index(EOS_IDX)] if EOS_IDX in row else row)
    return out


def _encode(model: Transformer, src: Tensor, srcs: list[Sequence[int]], chunk: int = 64) -> Tensor:
    """Encoder output (n, S, d) for rows sorted longest first, run in chunks of similar length.

    Each chunk is padded only to its own longest source (padding is most of the encoder's work
    otherwise); the rest is zero-filled. Those positions are padding, hidden from the
    cross-attention by its key mask, so their values never matter.
    """
    n, full = src.shape
    enc: Tensor | None = None
    for start in range(0, n, chunk):
        length = max(1, max(len(s) for s in srcs[start : start + chunk]))
        part = src[start : start + chunk, :length]
        out = model.encoder(part, create_padding_mask_for_attention(part, PAD_IDX))  # (c, length, d)
        if enc is None:
            enc = out.new_zeros(n, full, out.size(-1))
        enc[start : start + chunk, :length] = out
    if enc is None:  # decode_in_length_order never asks for an empty batch
        raise ValueError("no sentences to encode")
    return enc


def _compact(cache: Tensor, keep: Tensor, filled: int, dim: int) -> Tensor:
    """Rows `keep` of a cache, copying only the first `filled` entries along `dim`."""
    new = torch.empty((keep.numel(), *cache.shape[1:]), dtype=cache.dtype, device=cache.device)
    new.narrow(dim, 0, filled).copy_(cache.narrow(dim, 0, filled).index_select(0, keep))
    return new
