"""Show that each mutant really behaves differently from the correct notebook (no equivalent mutants).

The corpus's own notebooks (not student code) are loaded in this process; the mutated part of
each mutant is compared with the correct one on seeded random inputs, with every parameter set
to the same random values on both sides (so that default initialisations such as LayerNorm's
ones and zeros cannot hide a difference): outputs in eval mode, outputs in train mode with
dropout under the same seed, and gradients.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from assignments.transformer_mt.assignment import ASSIGNMENT
from autograder.notebook import load_submission

GRADER_GLOBALS = dict(ASSIGNMENT.grader_globals)  # Part 2's (assignment.yml `grader_globals`)

PAD = 3
TOLERANCE = 1e-4
D_MODEL, FF_DIM, HEADS, LAYERS, MAX_LEN = 16, 32, 4, 2, 20
SRC_VOCAB, TGT_VOCAB = 29, 23


def load_namespace(path: Path) -> dict[str, Any]:
    """Run a corpus notebook's loadable statements in a fresh namespace (trusted corpus files only).

    Args:
        path: a notebook of the corpus (or the correct example).

    Returns:
        The namespace, with the grader's globals set as the engine sets them.
    """
    namespace: dict[str, Any] = {"__name__": "soundness_case"}
    grader_globals = {k: (torch.device(str(v)) if k == "device" else v) for k, v in GRADER_GLOBALS.items()}
    namespace.update(grader_globals)
    loaded = load_submission(path, provided_names=frozenset(GRADER_GLOBALS))
    with contextlib.redirect_stdout(io.StringIO()):
        for statement in loaded.statements:
            code = compile("\n" * (statement.line - 1) + statement.code, f"<cell {statement.cell}>", "exec")
            with contextlib.suppress(Exception):  # a broken statement only loses itself, as in the worker
                exec(code, namespace)
    namespace.update(grader_globals)  # the grader's values win, as in the worker
    return namespace


def _tokens(gen: torch.Generator, batch: int, length: int, vocab: int, ragged: bool = True) -> Tensor:
    ids = torch.randint(4, vocab, (batch, length), generator=gen)
    ids[:, 0] = 1
    for row in range(batch):
        full = row == 0 or not ragged
        true_len = length if full else int(torch.randint(2, length + 1, (1,), generator=gen))
        ids[row, true_len - 1] = 2
        ids[row, true_len:] = PAD
    return ids


def _differs(a: Any, b: Any) -> str | None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return f"returns {type(b).__name__} instead of {type(a).__name__}"
    a, b = a.detach(), b.detach()
    if a.shape != b.shape:
        return f"shape {tuple(b.shape)} instead of {tuple(a.shape)}"
    if a.dtype == torch.bool or not a.is_floating_point() or not b.is_floating_point():
        return None if torch.equal(a != 0, b != 0) else "different values"
    diff = float((a.double() - b.double()).abs().max()) if a.numel() else 0.0
    return None if diff <= TOLERANCE * (1 + float(a.double().abs().max())) else f"values differ by {diff:.3g}"


def _randomise(module: nn.Module, seed: int) -> list[tuple[int, ...]]:
    gen = torch.Generator().manual_seed(seed)
    shapes = []
    with torch.no_grad():
        for param in module.parameters():
            param.copy_(torch.randn(param.shape, generator=gen) * 0.5 + (1.0 if param.dim() == 1 else 0.0))
            shapes.append(tuple(param.shape))
    return shapes


def _compare_modules(
    build: Callable[[dict[str, Any], float], nn.Module],
    inputs: Callable[[dict[str, Any], torch.Generator], list[Any]],
    good: dict[str, Any],
    bad: dict[str, Any],
) -> str | None:
    """How a mutated module's behaviour differs from the correct one's (None: not at all)."""
    for drop_prob, mode in ((0.0, "eval"), (0.3, "train")):
        try:
            torch.manual_seed(0)
            reference = build(good, drop_prob)
            torch.manual_seed(0)
            mutant = build(bad, drop_prob)
        except Exception as error:
            return f"cannot be built: {type(error).__name__}: {error}"
        if _randomise(reference, 1) != _randomise(mutant, 1):
            return "a different parameter layout (count, shapes or sharing)"
        reference.train(mode == "train")
        mutant.train(mode == "train")
        for case in range(3):
            args_good = inputs(good, torch.Generator().manual_seed(100 + case))
            args_bad = inputs(good, torch.Generator().manual_seed(100 + case))
            torch.manual_seed(7)
            want = reference(*args_good)
            try:
                torch.manual_seed(7)
                got = mutant(*args_bad)
            except Exception as error:
                return f"raises {type(error).__name__}: {error}"
            difference = _differs(want, got)
            if difference:
                return f"{mode} output: {difference}"
            if mode == "eval":
                upstream = torch.randn(want.shape, generator=torch.Generator().manual_seed(5))
                reference.zero_grad()
                mutant.zero_grad()
                (want * upstream).sum().backward()
                (got * upstream).sum().backward()
                for (name, p_good), p_bad in zip(reference.named_parameters(), mutant.parameters(), strict=False):
                    g_good = torch.zeros_like(p_good) if p_good.grad is None else p_good.grad
                    g_bad = torch.zeros_like(p_bad) if p_bad.grad is None else p_bad.grad
                    if _differs(g_good, g_bad):
                        return f"gradient of {name}: {_differs(g_good, g_bad)}"
    return None


def _masks(namespace: dict[str, Any], src: Tensor, tgt: Tensor) -> tuple[Tensor, Tensor]:
    return (
        namespace["create_padding_mask_for_attention"](src, PAD),
        namespace["create_look_ahead_mask_for_attention"](tgt, PAD),
    )


def _decoder_layer_inputs(ns: dict[str, Any], gen: torch.Generator) -> list[Any]:
    src, tgt = _tokens(gen, 3, 7, SRC_VOCAB), _tokens(gen, 3, 7, TGT_VOCAB)
    return [torch.randn(3, 7, D_MODEL, generator=gen), torch.randn(3, 7, D_MODEL, generator=gen), *_masks(ns, src, tgt)]


def _decoder_inputs(ns: dict[str, Any], gen: torch.Generator) -> list[Any]:
    src, tgt = _tokens(gen, 3, 8, SRC_VOCAB), _tokens(gen, 3, 8, TGT_VOCAB)
    return [tgt, torch.randn(3, 8, D_MODEL, generator=gen), *_masks(ns, src, tgt)]


def _transformer_inputs(ns: dict[str, Any], gen: torch.Generator) -> list[Any]:
    src, tgt = _tokens(gen, 3, 8, SRC_VOCAB), _tokens(gen, 3, 8, TGT_VOCAB)
    return [src, tgt, *_masks(ns, src, tgt)]


def _compare_mask(good: dict[str, Any], bad: dict[str, Any]) -> str | None:
    gen = torch.Generator().manual_seed(3)
    for batch, length, ragged in ((2, 6, False), (4, 9, True), (3, 5, True)):
        tgt = _tokens(gen, batch, length, TGT_VOCAB, ragged)
        want = good["create_look_ahead_mask_for_attention"](tgt, PAD)
        try:
            got = bad["create_look_ahead_mask_for_attention"](tgt, PAD)
        except Exception as error:
            return f"raises {type(error).__name__}: {error}"
        difference = _differs(want, got)
        if difference:
            return difference
    return None


def _compare_loss(good: dict[str, Any], bad: dict[str, Any]) -> str | None:
    gen = torch.Generator().manual_seed(4)
    # The second criterion smooths its labels: a loss that ignores its criterion differs there.
    criteria = (nn.CrossEntropyLoss(reduction="none"), nn.CrossEntropyLoss(reduction="none", label_smoothing=0.1))
    for (batch, length), criterion in zip(((3, 7), (5, 9)), criteria, strict=True):
        tgt = _tokens(gen, batch, length, TGT_VOCAB)
        logits = torch.randn(batch, length, TGT_VOCAB, generator=gen) * 2
        results = []
        for namespace in (good, bad):
            leaf = logits.clone().requires_grad_(True)
            try:
                loss = namespace["calculate_loss"](leaf, tgt, criterion)
                loss.backward()
            except Exception as error:
                return f"raises {type(error).__name__}: {error}"
            results.append((loss.detach(), leaf.grad))
        difference = _differs(results[0][0], results[1][0])
        if difference:
            return f"loss value: {difference}"
        if results[1][1] is None or _differs(results[0][1], results[1][1]):
            return "gradient with respect to the logits differs"
    return None


def _transformer(ns: dict[str, Any], p: float) -> nn.Module:
    return ns["Transformer"]({"de": SRC_VOCAB, "en": TGT_VOCAB}, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS, p)


def _compare_train_step(good: dict[str, Any], bad: dict[str, Any]) -> str | None:
    """The training step run with the hidden check's recording stand-in model (probes)."""
    from assignments.transformer_mt.checks.probes import probe_namespace

    run_train_step = probe_namespace()["run_train_step"]
    gen = torch.Generator().manual_seed(6)
    src, tgt = _tokens(gen, 3, 7, SRC_VOCAB), _tokens(gen, 3, 7, TGT_VOCAB)
    masks = _masks(good, src, tgt)
    reports = []
    for ns in (good, bad):
        try:
            reports.append(run_train_step(ns.get("process_batch_for_train"), src, tgt, *masks, SRC_VOCAB, TGT_VOCAB, 0))
        except Exception as error:
            return f"the training step raises {type(error).__name__}: {error}"
    want, got = reports
    for key, value in want.items():
        other = got.get(key)
        if isinstance(value, list) and isinstance(other, list):
            same = len(value) == len(other) and all(_differs(a, b) is None for a, b in zip(value, other, strict=True))
        elif isinstance(value, Tensor) and isinstance(other, Tensor):
            same = _differs(value, other) is None
        else:
            same = value == other
        if not same:
            return f"the training step differs in {key}"
    return None


def _compare_transformer(good: dict[str, Any], bad: dict[str, Any]) -> str | None:
    return _compare_modules(_transformer, _transformer_inputs, good, bad) or _compare_train_step(good, bad)


COMPARISONS: dict[str, Callable[[dict[str, Any], dict[str, Any]], str | None]] = {
    "look_ahead_mask": _compare_mask,
    "decoder_layer": lambda good, bad: _compare_modules(
        lambda ns, p: ns["DecoderLayer"](D_MODEL, FF_DIM, HEADS, p), _decoder_layer_inputs, good, bad
    ),
    "decoder": lambda good, bad: _compare_modules(
        lambda ns, p: ns["Decoder"](TGT_VOCAB, MAX_LEN, D_MODEL, FF_DIM, HEADS, LAYERS, p), _decoder_inputs, good, bad
    ),
    "transformer_forward": _compare_transformer,
    "masked_loss": _compare_loss,
}


def behaviour_difference(correct: dict[str, Any], mutant: dict[str, Any], part: str) -> str | None:
    """How the mutant's implementation of a part behaves differently from the correct one.

    Args:
        correct: namespace of the correct notebook (from `load_namespace`).
        mutant: namespace of the mutant notebook.
        part: the unit part the mutant is tagged with.

    Returns:
        A description of the first difference found, or None when none was found (an
        equivalent mutant, which no check can catch).
    """
    with contextlib.redirect_stdout(io.StringIO()):
        return COMPARISONS[part](correct, mutant)
