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
from .model import DecoderLayer, Transformer

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
        model: the reference Transformer (its modules run in eval mode: no dropout).
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
    return decode_in_length_order(
        model, src_seqs, batch_size, lambda batch: _decode_batch(model, batch, max_new_tokens, device, length_cap)
    )


def _decode_batch(
    model: Transformer,
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
    pe = emb.pos_emb.positional_encoding.to(device)  # (max_len, d)
    if max_new_tokens > pe.size(0):
        raise ValueError(f"max_new_tokens {max_new_tokens} exceeds the positional table ({pe.size(0)})")
    # The decoder's layers (an nn.ModuleList, which types its items as plain modules).
    layers = [cast(DecoderLayer, layer) for layer in model.decoder.decoder_layers]
    h = layers[0].masked_multi_head_attention.num_heads if layers else 1
    dk = emb.tok_emb.embedding_dim // h

    # Per layer: cross-attention K/V (n, h, S, dk), projected once from the encoder output.
    # Contiguous once here, or every step's matmul would copy them again.
    cross_kv = []
    for layer in layers:
        attention = layer.enc_dec_attention
        cross_kv.append([attention._split(proj(enc)).contiguous() for proj in (attention.Wk, attention.Wv)])
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
        # The newest position only, through the layers' own modules: x (b, 1, d), heads (b, h, 1, dk).
        x = emb.tok_emb(y[:, None]) + pe[t]
        self_ok[:, t] = y != PAD_IDX
        ok = self_ok[:, None, None, : t + 1]  # (b, 1, 1, t+1)
        for layer, keys, values, (cross_k, cross_v) in zip(layers, self_k, self_v, cross_kv, strict=True):
            sa, ca = layer.masked_multi_head_attention, layer.enc_dec_attention
            keys[:, :, t : t + 1] = sa._split(sa.Wk(x))
            values[:, :, t : t + 1] = sa._split(sa.Wv(x))
            a = sa.scaled_dot_product_attention(sa._split(sa.Wq(x)), keys[:, :, : t + 1], values[:, :, : t + 1], ok)
            x = layer.norm1(sa.Wo(a.reshape(b, 1, -1)) + x)
            a = ca.scaled_dot_product_attention(ca._split(ca.Wq(x)), cross_k, cross_v, cross_ok)
            x = layer.norm2(ca.Wo(a.reshape(b, 1, -1)) + x)
            x = layer.norm3(layer.feed_forward_neural_network(x) + x)
        y = model.decoder.dense_layer(x[:, 0]).argmax(dim=-1)  # (b,)
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
            cross_kv = [[k[keep], v[keep]] for k, v in cross_kv]
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
    full = src.size(1)
    parts = []
    for start in range(0, src.size(0), chunk):
        length = max(1, max(len(s) for s in srcs[start : start + chunk]))
        part = src[start : start + chunk, :length]
        out = model.encoder(part, create_padding_mask_for_attention(part, PAD_IDX))  # (c, length, d)
        parts.append(F.pad(out, (0, 0, 0, full - length)))  # zero-filled to (c, S, d)
    return torch.cat(parts)


def _compact(cache: Tensor, keep: Tensor, filled: int, dim: int) -> Tensor:
    """Rows `keep` of a cache, copying only the first `filled` entries along `dim`."""
    new = torch.empty((keep.numel(), *cache.shape[1:]), dtype=cache.dtype, device=cache.device)
    new.narrow(dim, 0, filled).copy_(cache.narrow(dim, 0, filled).index_select(0, keep))
    return new
