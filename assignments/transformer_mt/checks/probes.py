"""Stand-in modules that isolate one graded part from the others during checks.

`Decoder` is checked with these `ProbeDecoderLayer`s in place of the student's `DecoderLayer`,
and `Transformer.forward` with a `ProbeDecoder` in place of the student's `Decoder`, so that a
bug in one part never costs points in another; `run_train_step` runs the student's training step
with a recording stand-in model (`ProbeTrainModel`). The probes are plain, deliberately simple code
(no attention): they reveal nothing about the solution and are safe to send into the worker,
which receives PROBE_SOURCE as text. Each probe reacts to every input it is given (both masks,
the encoder output, dropout), so a part that routes an input wrongly is still caught.
"""

from __future__ import annotations

import functools
from types import CodeType
from typing import Any

PROBE_SOURCE = """
import torch
from torch import nn


def _masked_mean(values, mask):
    # values (B, S, d), mask (B, 1, T, S) nonzero where visible -> (B, T, d)
    weights = (mask[:, 0] != 0).to(values.dtype)
    return weights @ values / weights.sum(dim=-1, keepdim=True).clamp(min=1.0)


class ProbeDecoderLayer(nn.Module):
    def __init__(self, embedding_dim, feed_forward_dim, num_heads, drop_prob):
        super().__init__()
        self.size = embedding_dim  # what code after public implementations reads (layer.size)
        self.mix = nn.Linear(embedding_dim, feed_forward_dim)
        self.back = nn.Linear(feed_forward_dim, embedding_dim)
        self.head_gain = nn.Parameter(torch.linspace(0.5, 1.5, num_heads))
        self.dropout = nn.Dropout(drop_prob)

    def forward(self, dec, enc, src_mask, trg_mask):
        seen = _masked_mean(dec, trg_mask)
        context = _masked_mean(enc, src_mask)
        hidden = torch.tanh(self.mix(seen + 0.5 * dec))
        return dec + self.dropout(self.back(hidden)) * self.head_gain.mean() + 0.25 * context


class ProbeDecoder(nn.Module):
    def __init__(self, vocab_size, sequence_length, embedding_dim, feed_forward_dim, num_heads,
                 num_layers, drop_prob):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding_dim)
        self.layer_gain = nn.Parameter(torch.linspace(0.5, 1.5, num_layers * num_heads))
        self.out = nn.Linear(embedding_dim, vocab_size)
        self.dropout = nn.Dropout(drop_prob)
        self.sequence_length = sequence_length
        self.feed_forward_dim = feed_forward_dim

    def forward(self, dec, enc, src_mask, trg_mask):
        x = self.embed(dec)
        seen = _masked_mean(x, trg_mask)
        context = _masked_mean(enc, src_mask)
        return self.out(self.dropout(torch.tanh(x + seen) + 0.5 * context)) * self.layer_gain.mean()


class ProbeTrainModel(nn.Module):
    # Stands in for the Transformer in the training step: records every call, returns logits
    # (B, T, tgt_vocab) that depend on both inputs.
    def __init__(self, src_vocab, tgt_vocab, dim=8):
        super().__init__()
        self.src_embed = nn.Embedding(src_vocab, dim)
        self.tgt_embed = nn.Embedding(tgt_vocab, dim)
        self.out = nn.Linear(dim, tgt_vocab)
        self.calls = []

    def forward(self, *args, **kwargs):
        given = dict(zip(("src", "dec", "src_mask", "tgt_mask"), args))
        for key, value in kwargs.items():
            name = key.lower()
            if "mask" in name:
                given["src_mask" if ("src" in name or "source" in name) else "tgt_mask"] = value
            else:
                given["src" if ("src" in name or "source" in name) else "dec"] = value
        self.calls.append(given)
        src, dec = given.get("src"), given.get("dec")
        context = self.src_embed(src).mean(dim=1, keepdim=True)
        return self.out(torch.tanh(self.tgt_embed(dec) + context))


_TRAIN_STEP_ROLES = (("model", ("model", "transformer", "net")), ("optimizer", ("optim",)),
                     ("criterion", ("crit", "loss_f", "loss_fn", "lossfn")),
                     ("src", ("src", "source")), ("tgt", ("tgt", "trg", "target")),
                     ("batch", ("batch",)))


def _train_step_arguments(step, values):
    # The step's parameters, bound by name (model, src..., tgt..., criterion, optimizer, batch);
    # the 5-argument template order when no name is recognised.
    import inspect

    args, bound = [], set()
    try:
        params = [p for p in inspect.signature(step).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    for param in params:
        name = param.name.lower()
        role = next((r for r, keys in _TRAIN_STEP_ROLES if any(k in name for k in keys)), None)
        if role is None:
            if param.default is not param.empty:
                break
            return [values[r] for r in ("model", "src", "tgt", "criterion", "optimizer")], set()
        args.append(values[role])
        bound.add(role)
    return args, bound


class PlainSGD:
    # The optimizer handed to the step: plain SGD without torch.optim, whose first step imports
    # seconds of machinery (a worker request must stay well under its timeout).
    def __init__(self, params, lr):
        self.params = list(params)
        self.param_groups = [{"params": self.params, "lr": lr}]

    def zero_grad(self, set_to_none=True):
        for param in self.params:
            param.grad = None

    def step(self, closure=None):
        with torch.no_grad():
            for param in self.params:
                if param.grad is not None:
                    param.add_(param.grad, alpha=-self.param_groups[0]["lr"])


def run_train_step(step, src, tgt, src_mask, tgt_mask, src_vocab, tgt_vocab, seed):
    # Runs the student's process_batch_for_train once with ProbeTrainModel, SGD and stand-ins
    # for the mask and loss functions (they return the grader's tensors or a plain stand-in
    # loss and record what they were given). Returns what happened, for the grader to judge.
    torch.manual_seed(seed)
    model = ProbeTrainModel(src_vocab, tgt_vocab)
    initial = [p.detach().clone() for p in model.parameters()]
    criterion = nn.CrossEntropyLoss(reduction="none")
    optimizer = PlainSGD(model.parameters(), lr=0.5)
    losses = []

    def stand_in_look_ahead(batch, pad_idx=3, *rest, **options):
        if torch.is_tensor(batch) and batch.shape == tgt.shape and bool((batch.cpu() == tgt).all()):
            return tgt_mask.clone()
        return torch.ones(batch.size(0), 1, batch.size(1), batch.size(1), dtype=torch.int)

    def stand_in_padding(batch, pad_idx=3, *rest, **options):
        if torch.is_tensor(batch) and batch.shape == src.shape and bool((batch.cpu() == src).all()):
            return src_mask.clone()
        length = batch.size(1)
        return (batch != pad_idx)[:, None, None, :].expand(batch.size(0), 1, length, length)

    def stand_in_loss(decoder_output, tgt_batch, *rest, **options):
        if not torch.is_tensor(decoder_output):
            raise TypeError(f"calculate_loss was given a {type(decoder_output).__name__} as decoder_output "
                            "instead of the model's output: is the model call filled in?")
        losses.append((decoder_output, tgt_batch))
        return decoder_output.float().square().mean()

    values = {"model": model, "src": src, "tgt": tgt, "criterion": criterion,
              "optimizer": optimizer, "batch": (src, tgt)}
    args, bound = _train_step_arguments(step, values)
    namespace = getattr(step, "__globals__", {})
    swap = {"create_look_ahead_mask_for_attention": stand_in_look_ahead,
            "create_padding_mask_for_attention": stand_in_padding, "calculate_loss": stand_in_loss}
    swap.update({role: values[role] for role in ("model", "criterion", "optimizer") if role not in bound})
    saved = {key: namespace[key] for key in swap if key in namespace}
    namespace.update(swap)
    try:
        returned = step(*args)
    finally:
        for key in swap:  # the stand-ins out, what the student's module held back
            namespace.pop(key, None)
        namespace.update(saved)
    if torch.is_tensor(returned) and returned.numel() == 1:
        returned = float(returned.detach().reshape(()))
    elif isinstance(returned, (int, float)) and not isinstance(returned, bool):
        returned = float(returned)
    else:
        returned = type(returned).__name__
    calls = len(model.calls)
    first = model.calls[0] if model.calls else {}

    def plain(value):
        return value.detach().cpu().clone() if torch.is_tensor(value) else None

    final = [p.detach().cpu().clone() for p in model.parameters()]
    logits = None
    if first.get("src") is not None and first.get("dec") is not None:
        # The logits of the first call, recomputed with the initial weights (the final ones are kept above).
        with torch.no_grad():
            for param, old in zip(model.parameters(), initial):
                param.copy_(old)
            logits = model(first["src"], first["dec"])
    report = {"calls": calls, "src": plain(first.get("src")), "dec": plain(first.get("dec")),
              "src_mask": plain(first.get("src_mask")), "tgt_mask": plain(first.get("tgt_mask")),
              "logits": plain(logits), "loss_calls": len(losses), "returned": returned,
              "initial": initial, "final": final}
    if losses:
        report["loss_output"], report["loss_target"] = plain(losses[0][0]), plain(losses[0][1])
    return report
"""

TRAIN_STEP_HELPER = "grader_helpers:run_train_step"  # called in the worker by that name


def probe_namespace() -> dict[str, Any]:
    """Run PROBE_SOURCE in the trusted process (for the reference side of a check).

    Returns:
        Its globals: the probe classes and the training-step helper.
    """
    namespace: dict[str, Any] = {}
    exec(_probe_code(), namespace)  # our own code, not the student's
    return namespace


@functools.cache
def _probe_code() -> CodeType:
    """PROBE_SOURCE compiled once per process (each check still runs it afresh, for fresh classes)."""
    return compile(PROBE_SOURCE, "<probes>", "exec")
