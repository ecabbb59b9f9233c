"""Model-agnostic batched greedy translation that never sees the target sentences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import torch
from torch import Tensor, nn

from mtkit.constants import DEFAULT_MAX_LENGTH, EOS_IDX, PAD_IDX, SOS_IDX

# A mask function as in the assignment: (batch (B, L) of ids, pad_idx) -> mask (B, 1, L, L),
# nonzero = may attend. Bool or int masks are both fine; they are moved to `device` here.
MaskFn = Callable[[Tensor, int], Tensor]

# This module ships to students and runs next to untrusted code, so it contains no graded part:
# the look-ahead and padding masks are supplied by the caller.


def _model_device(model: nn.Module) -> torch.device:
    param = next(model.parameters(), None)
    return param.device if param is not None else torch.device("cpu")


def _pad(seqs: Sequence[Sequence[int]], length: int, pad_idx: int) -> Tensor:
    out = torch.full((len(seqs), length), pad_idx, dtype=torch.long)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    return out


def _cut(ids: list[int], eos_idx: int) -> list[int]:
    return ids[: ids.index(eos_idx)] if eos_idx in ids else ids


def greedy_translate(
    model: nn.Module,
    src_seqs: Sequence[Sequence[int]],
    *,
    src_mask_fn: MaskFn,
    tgt_mask_fn: MaskFn,
    max_new_tokens: int = DEFAULT_MAX_LENGTH,
    batch_size: int = 128,
    device: torch.device | str | None = None,
    sos_idx: int = SOS_IDX,
    eos_idx: int = EOS_IDX,
    pad_idx: int = PAD_IDX,
    own_lengths: bool = False,
) -> list[list[int]]:
    """Translate source id sequences by batched greedy decoding.

    Works with any model exposing `model.encoder(src, src_mask)` and
    `model.decoder(dec, enc, src_mask, trg_mask) -> logits (B, T, V)` as in the assignment,
    including its equal-length quirk (the given MultiHeadAttention reshapes keys with the query's
    length): the source and the decoder input are padded to one common length L at every step and
    the square (B, 1, L, L) masks from the caller's functions are used throughout.

    Honesty: no target is ever passed in. The decoder input is `<sos>` followed by the model's own
    previous argmax tokens, padded; `tgt_mask_fn` is applied to exactly that tensor. Each batch is
    encoded once padded to its longest source S; step t uses the first L = max(S, t + 1) positions
    of the source, its encoding and its mask. Rows still decoding when L first exceeds S are
    encoded once more, padded to L_max = max(S, max_new_tokens), and sliced from then on (for a
    model with a correct padding mask, the extra padding changes nothing). Rows that have emitted
    `<eos>` are dropped from the batch; decoding stops when all have, or after max_new_tokens.
    Once per call the decoder also runs on the first row of the first step alone, to find its
    output layer (`_LastPositionProjection`); that call's logits are not used.

    With `own_lengths` (a model whose MultiHeadAttention reshapes key and value with their own
    length, as the current template's does) the source stays at its own length S and step t runs
    the decoder over its t + 1 positions only; the encoder-decoder attention then gets the
    key-padding row of the caller's source mask, (b, 1, 1, S) expanded to (b, 1, t + 1, S).

    Args:
        model: the encoder-decoder model; put in eval mode for the call (its mode is restored).
        src_seqs: source id sequences as the model saw them in training (with `<sos>`/`<eos>`).
        src_mask_fn: (src (B, L), pad_idx) -> padding mask (B, 1, L, L).
        tgt_mask_fn: (dec (B, L), pad_idx) -> look-ahead mask (B, 1, L, L).
        max_new_tokens: most tokens generated per sentence, `<eos>` included; the decoder input
            reaches this length, so it must not exceed the model's positional table
            (the notebook's `max_length`).
        batch_size: sentences per batch (sorted by source length, longest first).
        device: where the inputs and masks are put; the model must already be there
            (default: the device of its first parameter, else CPU).
        sos_idx: id of `<sos>`.
        eos_idx: id of `<eos>`.
        pad_idx: id of `<pad>`.
        own_lengths: the model attends between sequences of different lengths (see above).

    Returns:
        One id list per source sentence, in input order, without `<sos>` and cut before the
        first `<eos>` (all max_new_tokens ids if none was emitted).
    """
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    device = torch.device(device) if device is not None else _model_device(model)
    projection = _LastPositionProjection.unknown()  # found at the first step, then kept for every batch
    return decode_in_length_order(
        model,
        src_seqs,
        batch_size,
        lambda batch: _translate_batch(
            model,
            batch,
            src_mask_fn,
            tgt_mask_fn,
            max_new_tokens,
            device,
            (sos_idx, eos_idx, pad_idx),
            projection,
            own_lengths,
        ),
    )


def decode_in_length_order(
    model: nn.Module,
    src_seqs: Sequence[Sequence[int]],
    batch_size: int,
    decode_batch: Callable[[list[Sequence[int]]], list[list[int]]],
) -> list[list[int]]:
    """Run a batch decoder over sources sorted longest first, in eval and inference mode.

    Sorting keeps the padding within a batch small; the results are put back in input order and
    the model's train/eval mode is restored afterwards.

    Args:
        model: the model `decode_batch` uses (only its mode is changed here).
        src_seqs: source id sequences.
        batch_size: sentences per call of `decode_batch`.
        decode_batch: sources of one batch -> one id list per source, in the same order.

    Returns:
        One id list per source sentence, in input order.
    """
    order = sorted(range(len(src_seqs)), key=lambda i: len(src_seqs[i]), reverse=True)
    results: list[list[int]] = [[] for _ in src_seqs]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                for i, out in zip(idx, decode_batch([src_seqs[i] for i in idx]), strict=True):
                    results[i] = out
    finally:
        model.train(was_training)
    return results


def _translate_batch(
    model: nn.Module,
    srcs: list[Sequence[int]],
    src_mask_fn: MaskFn,
    tgt_mask_fn: MaskFn,
    max_new_tokens: int,
    device: torch.device,
    special_ids: tuple[int, int, int],
    projection: _LastPositionProjection,
    own_lengths: bool,
) -> list[list[int]]:
    sos_idx, eos_idx, pad_idx = special_ids
    n = len(srcs)
    src_len = max(1, max(len(s) for s in srcs))
    # Own lengths: the source never grows past S, so it is padded (and encoded) only to S.
    full_len = src_len if own_lengths else max(src_len, max_new_tokens)
    src = _pad(srcs, full_len, pad_idx).to(device)  # (n, L_max)
    # Encoded at the batch's own source length S (padding to L_max would be most of the encoder's
    # work); the rows still decoding once the decoder input outgrows S are encoded again at L_max.
    short = src[:, :src_len]
    # The student's model: its encoder is whatever it defined, typed here as a callable.
    encoder = cast("Callable[..., Tensor]", model.encoder)
    enc = encoder(short, src_mask_fn(short, pad_idx).to(device))  # (n, S, d)

    # gen[:, 0] = <sos>; gen[:, t + 1] = token generated at step t. Pad beyond what exists.
    gen = torch.full((n, max_new_tokens + 1), pad_idx, dtype=torch.long, device=device)
    gen[:, 0] = sos_idx
    rows = torch.arange(n, device=device)  # batch rows still decoding
    act_src, act_enc = src, enc
    owner = model.decoder if isinstance(model.decoder, nn.Module) else model
    with _EncodingProjections(owner) as projections:
        return _decode_steps(
            model,
            gen,
            rows,
            act_src,
            act_enc,
            src_len,
            src_mask_fn,
            tgt_mask_fn,
            max_new_tokens,
            device,
            eos_idx,
            pad_idx,
            projection,
            projections,
            owner,
            own_lengths,
        )


def _decode_steps(
    model: nn.Module,
    gen: Tensor,
    rows: Tensor,
    act_src: Tensor,
    act_enc: Tensor,
    src_len: int,
    src_mask_fn: MaskFn,
    tgt_mask_fn: MaskFn,
    max_new_tokens: int,
    device: torch.device,
    eos_idx: int,
    pad_idx: int,
    projection: _LastPositionProjection,
    projections: _EncodingProjections,
    owner: nn.Module,
    own_lengths: bool = False,
) -> list[list[int]]:
    """The greedy steps of one batch (see `_translate_batch`); returns its id lists."""
    enc_view, view_of, view_length = act_enc, None, 0
    projections.new_base(act_enc)
    for step in range(max_new_tokens):
        cur = step + 1  # decoder input length: <sos> + `step` generated tokens
        # Common length L for source, encoding and decoder input; own lengths: the source keeps S.
        length = src_len if own_lengths else max(src_len, cur)
        if length > act_enc.size(1):  # past S: the remaining rows' encoding at L_max, once
            act_enc = cast("Callable[..., Tensor]", model.encoder)(act_src, src_mask_fn(act_src, pad_idx).to(device))
            projections.new_base(act_enc)
        if view_of is not act_enc or view_length != length:
            # One view object while neither the length nor the rows change, so that the decoder's
            # projections of it can be reused (`_EncodingProjections`).
            enc_view, view_of, view_length = act_enc[:, :length], act_enc, length
            projections.set_view(enc_view)
        s = act_src[:, :length]
        dec_len = cur if own_lengths else length
        dec = torch.full((rows.numel(), dec_len), pad_idx, dtype=torch.long, device=device)
        dec[:, :cur] = gen[rows, :cur]
        src_mask = src_mask_fn(s, pad_idx).to(device)  # (b, 1, L, L)
        if own_lengths:  # the key-padding row for every query position: (b, 1, cur, S)
            src_mask = src_mask[:, :, :1, :].expand(-1, -1, cur, -1)
        tgt_mask = tgt_mask_fn(dec, pad_idx).to(device)  # (b, 1, dec_len, dec_len), over generated ids only

        decoder = cast("Callable[..., Tensor]", model.decoder)

        def run_decoder() -> Tensor:  # called only within this step, so it sees this step's tensors
            return decoder(dec, enc_view, src_mask, tgt_mask)  # noqa: B023 - (b, L, V)

        if not projection.searched:  # first step of the call: find the output layer on one row
            # One row is enough to see which layer returns the logits, and spares the projection
            # of every position of the whole batch onto the vocabulary.
            projection.find(owner, lambda: decoder(dec[:1], enc_view[:1], src_mask[:1], tgt_mask[:1]))  # noqa: B023
        nxt = projection.next_tokens(run_decoder, cur - 1)
        gen[rows, cur] = nxt
        alive = nxt != eos_idx
        if not bool(alive.any()):
            break
        if not bool(alive.all()):  # drop finished rows from the batch
            keep = alive.nonzero().squeeze(1)
            rows, act_src, act_enc = rows[keep], act_src[keep], act_enc[keep]
            projections.keep_rows(keep)
    return [_cut(row, eos_idx) for row in gen[:, 1:].tolist()]


class _EncodingProjections:
    """Reuses the decoder's nn.Linear projections of the source encoding from step to step.

    The encoder-decoder attention projects the source encoding to keys and values at every step,
    although the encoding changes only when rows finish (a subset of the rows) or, past the source
    length, when the common length grows. While this context is active, each nn.Linear of the
    decoder that is called on exactly the tensor object in `encoding` (the step's view, see
    `set_view`) is served from a cache and gets a fresh tensor (the caller may change its result
    in place):

    - while the view covers the whole of the batch's encoding (the `base` of `new_base`, at the
      source length S), the layer is run once on the base and each later view gets the rows still
      decoding (`keep_rows`) from that one result: the layer works row by row, so these are the
      rows it would compute, without projecting the encoding again every time a sentence ends;
    - otherwise (the rows re-encoded past S, at a growing length), once per view object.

    Any other input runs the layer as usual. A layer whose `forward` cannot be wrapped is left alone.
    """

    def __init__(self, owner: nn.Module) -> None:
        self.layers = [m for m in owner.modules() if type(m) is nn.Linear]
        self.encoding: Tensor | None = None
        self._base: Tensor | None = None  # the encoding the batch started from (rows x S)
        self._rows: Tensor | None = None  # indices into _base of the rows still decoding; None: all
        self._base_cache: dict[int, Tensor] = {}  # id(layer) -> layer(_base)
        self._key: Tensor | None = None
        self._cache: dict[int, Tensor] = {}  # id(layer) -> layer(_key), views not covering _base
        self._wrapped: list[tuple[nn.Linear, Any]] = []  # with the instance's own `forward`, if any

    def new_base(self, base: Tensor) -> None:
        """Start from a newly computed encoding: all of its rows, no projection of it yet."""
        self._base, self._rows, self._base_cache = base, None, {}

    def keep_rows(self, keep: Tensor) -> None:
        """Only the rows `keep` (indices into the current rows) go on decoding."""
        self._rows = keep if self._rows is None else self._rows[keep]

    def set_view(self, view: Tensor) -> None:
        """The encoding view the decoder is given from this step on."""
        self.encoding = view

    def _covers_base(self, x: Tensor) -> bool:
        # The whole length of the base: the view's rows are contiguous, as the base's own are, so
        # the layer computes them as it computes them within the base. A shorter (strided) view can
        # be computed differently (to the last bit), so it is projected as it is.
        base = self._base
        return (
            base is not None
            and base.is_contiguous()
            and x.is_contiguous()
            and x.dim() == 3
            and x.size(1) == base.size(1)
        )

    def _wrap(self, layer: nn.Linear) -> None:
        plain = layer.forward
        own = layer.__dict__.get("forward")  # an instance-level forward set by the model's author

        def forward(x: Tensor) -> Tensor:
            if x is not self.encoding:
                return plain(x)
            if self._covers_base(x):
                full = self._base_cache.get(id(layer))
                if full is None:
                    full = self._base_cache[id(layer)] = plain(cast(Tensor, self._base))
                return full.clone() if self._rows is None else full[self._rows]  # a new tensor
            if self._key is not x:  # a new encoding view: forget the old projections
                self._key, self._cache = x, {}
            cached = self._cache.get(id(layer))
            if cached is None:
                cached = self._cache[id(layer)] = plain(x)
            return cached.clone()

        try:
            layer.forward = forward  # type: ignore[method-assign,assignment]  # an instance-level wrapper
        except (AttributeError, TypeError):  # e.g. a scripted module
            return
        self._wrapped.append((layer, own))

    def __enter__(self) -> _EncodingProjections:
        for layer in self.layers:
            self._wrap(layer)
        return self

    def __exit__(self, *exc: object) -> None:
        for layer, own in self._wrapped:
            if own is None:
                layer.__dict__.pop("forward", None)
            else:
                layer.__dict__["forward"] = own
        self._wrapped, self._cache, self._key, self.encoding = [], {}, None, None
        self._base, self._rows, self._base_cache = None, None, {}


class _LastPositionProjection:
    """Computes the decoder's output layer for the one position greedy decoding reads.

    Without a cache every step reruns the decoder over all L positions; its final nn.Linear (the
    vocabulary projection) is the largest single cost there and only position `cur - 1` is used.
    A forward pre-hook gives that Linear just that position. It is used only when the decoder's
    return value IS the output of one nn.Linear called once per forward (checked once per call,
    by running the decoder on the first row of the first step), so the logits read are unchanged;
    any other decoder is run in full.
    """

    def __init__(self, layer: nn.Linear | None, searched: bool) -> None:
        self.layer = layer
        self.searched = searched

    @classmethod
    def unknown(cls) -> _LastPositionProjection:
        """A helper whose layer is still to be found by `find` (on the first decoding step)."""
        return cls(None, searched=False)

    def find(self, owner: nn.Module, run: Callable[[], Tensor]) -> None:
        """Run the decoder once with hooks on the Linear layers of `owner`; keep the output layer.

        The layer found (None when no single Linear produces the decoder's output) is kept for
        every later step of the same `greedy_translate` call, in every batch: the model does not
        change during a call, and `next_tokens` still checks each result's shape. Without any
        Linear layer in `owner` the decoder is not run.

        Args:
            owner: the model's decoder (or the model, when its decoder is not a module).
            run: calls it on inputs of this step (their first row: the logits are not used).
        """
        outputs: dict[nn.Module, list[Tensor]] = {}
        layers = [m for m in owner.modules() if isinstance(m, nn.Linear)]
        if not layers:
            self.layer, self.searched = None, True
            return
        handles = [
            m.register_forward_hook(lambda mod, args, out: outputs.setdefault(mod, []).append(out)) for m in layers
        ]
        try:
            logits = run()
        finally:
            for handle in handles:
                handle.remove()
        found = [m for m, outs in outputs.items() if len(outs) == 1 and outs[0] is logits and logits.dim() == 3]
        layer = found[0] if len(found) == 1 else None
        self.layer, self.searched = (layer if isinstance(layer, nn.Linear) else None), True

    def next_tokens(self, run: Callable[[], Tensor], position: int) -> Tensor:
        """Argmax token at `position` of every row: (b,)."""
        if self.layer is None:
            return run()[:, position].argmax(dim=-1)
        sliced = [False]

        def keep_position(module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
            x = args[0] if args else None
            if not isinstance(x, Tensor) or x.dim() != 3:
                return None
            sliced[0] = True
            return (x[:, position : position + 1], *args[1:])  # (b, 1, d)

        handle = self.layer.register_forward_pre_hook(keep_position)
        try:
            logits = run()
        finally:
            handle.remove()
        if sliced[0] and logits.dim() == 3 and logits.size(1) == 1:
            return logits[:, 0].argmax(dim=-1)
        self.layer = None  # the decoder did something unexpected: run it in full from now on
        return run()[:, position].argmax(dim=-1)
