"""What the student's decoder self-attention can see: their look-ahead mask on a small padded batch."""

from __future__ import annotations

from typing import Any

import torch

from assignments.transformer_mt.messages import t
from assignments.transformer_mt.reference.masks import create_look_ahead_mask_for_attention

FUNCTION = "create_look_ahead_mask_for_attention"
PAD_IDX = 3
SPECIAL_LABELS = {0: "<unk>", 1: "<sos>", 2: "<eos>", 3: "<pad>"}

# Two target sentences of one batch, padded to a common length: the first ends in one pad, the
# second in three, so that a picture shows the causal triangle and the blocked padding columns.
EXAMPLE_WORDS = [
    ["<sos>", "a", "dog", "runs", "<eos>", "<pad>"],
    ["<sos>", "hello", "<eos>", "<pad>", "<pad>", "<pad>"],
]


def example_batch() -> tuple[torch.Tensor, list[list[str]]]:
    """The example target batch (ids) and the token label of every position.

    Returns:
        A LongTensor (2, 6) using the assignment's special ids (<sos>=1, <eos>=2, <pad>=3) and
        word ids from 4 on, and the labels drawn on the picture's axes.
    """
    vocabulary = {label: idx for idx, label in SPECIAL_LABELS.items()}
    for words in EXAMPLE_WORDS:
        for word in words:
            vocabulary.setdefault(word, len(vocabulary))
    ids = torch.tensor([[vocabulary[word] for word in words] for words in EXAMPLE_WORDS])
    return ids, [list(words) for words in EXAMPLE_WORDS]


def expected_mask(batch: torch.Tensor) -> torch.Tensor:
    """The correct mask as booleans (B, T, T): query i may see key j iff j <= i and j is no pad.

    Args:
        batch: target ids (B, T), padded with PAD_IDX.

    Returns:
        A bool tensor (B, T, T).
    """
    return create_look_ahead_mask_for_attention(batch, PAD_IDX)[:, 0]  # the reference's (B, 1, T, T), head axis dropped


def _as_grid(value: Any, batch: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
    """The student's answer as bool (B, T, T), or an explanation of why it cannot be drawn."""
    rows, length = batch.shape
    if value is None:
        return None, t("mask_view.returned_none", function=FUNCTION)
    if not isinstance(value, torch.Tensor):
        return None, t("mask_view.returned_type", function=FUNCTION, kind=f"`{type(value).__name__}`")
    if value.dtype.is_complex:
        return None, t("mask_view.returned_complex", function=FUNCTION, dtype=f"`{value.dtype}`")
    grid = value.detach().cpu()
    if tuple(grid.shape) == (rows, 1, length, length):
        grid = grid[:, 0]
    if tuple(grid.shape) != (rows, length, length):
        return None, t(
            "mask_view.returned_shape",
            function=FUNCTION,
            got=f"`{tuple(value.shape)}`",
            want=f"`{(rows, 1, length, length)}`",
            batch=f"`{(rows, length)}`",
        )
    return grid != 0, None


def describe(mask: torch.Tensor, expected: torch.Tensor, batch: torch.Tensor) -> list[str]:
    """Plain-language findings about a mask compared with the correct one.

    Args:
        mask: the student's mask as bool (B, T, T).
        expected: the correct mask, same shape.
        batch: the ids (B, T), padded with PAD_IDX.

    Returns:
        Sentences for the report; a single "matches" sentence when the masks agree.
    """
    if torch.equal(mask, expected):
        return [t("mask_view.correct")]
    length = batch.shape[1]
    later = torch.ones(length, length, dtype=torch.bool).triu(1)[None]
    key_is_word = (batch != PAD_IDX)[:, None, :]
    findings = []
    if bool((mask & later & key_is_word).any()):
        findings.append(t("mask_view.sees_later"))
    if bool((~mask & ~later & key_is_word).any()):
        findings.append(t("mask_view.hides_earlier"))
    if bool((mask & ~key_is_word).any()):
        findings.append(t("mask_view.sees_padding"))
    differing = int((mask != expected).sum())
    findings.append(t("mask_view.differing", differing=differing, total=mask.numel()))
    return findings


def _result(batch: torch.Tensor, labels: list[list[str]], **fields: Any) -> dict[str, Any]:
    expected = expected_mask(batch)
    return {
        "function": FUNCTION,
        "pad_idx": PAD_IDX,
        "tokens": batch.tolist(),
        "labels": labels,
        "expected": expected.int().tolist(),
        "mask": None,
        "shape": None,
        "dtype": None,
        "error": None,
        "matches": False,
        "findings": [],
        **fields,
    }


def collect_mask_picture(worker: Any) -> dict[str, Any]:
    """Evaluate the student's look-ahead mask in the sandboxed worker on the example batch.

    Never raises: a missing function, a student exception, a worker failure or an unusable
    return value are recorded under "error" so that the report can say so.

    Args:
        worker: the submission's `autograder.sandbox.Worker` (or anything with the same `call`).

    Returns:
        Plain JSON data for `SubmissionResult.extras["attention_mask"]`: "tokens" (B, T ids),
        "labels" (B, T strings), "pad_idx", "mask" (B, T, T of 0/1, or None), "expected"
        (B, T, T of 0/1), "shape" and "dtype" of what the function returned, "error" (str or
        None), "matches" (bool) and "findings" (sentences for the student).
    """
    batch, labels = example_batch()
    try:
        answer = worker.call(FUNCTION, [batch.clone(), PAD_IDX], set_globals={"pad_idx": PAD_IDX})
    except Exception as error:  # StudentError, WorkerFailure, or anything a fake raises
        reason = getattr(error, "reason", None) or str(error) or type(error).__name__
        return _result(batch, labels, error=t("mask_view.call_failed", function=FUNCTION, reason=reason))
    grid, problem = _as_grid(answer, batch)
    shape = list(answer.shape) if isinstance(answer, torch.Tensor) else None
    dtype = str(answer.dtype) if isinstance(answer, torch.Tensor) else type(answer).__name__
    if grid is None:
        return _result(batch, labels, shape=shape, dtype=dtype, error=problem)
    expected = expected_mask(batch)
    return _result(
        batch,
        labels,
        shape=shape,
        dtype=dtype,
        mask=grid.int().tolist(),
        matches=bool(torch.equal(grid, expected)),
        findings=describe(grid, expected, batch),
    )
