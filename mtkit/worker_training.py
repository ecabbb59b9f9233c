"""Train and run a submission's Transformer inside the sandboxed worker with the grader's recipe.

Runs in the untrusted worker: it receives the student's own classes and functions (their
`Transformer`, padding and look-ahead masks, `calculate_loss`), the training pairs as tensors,
and the recipe. It never receives validation targets: the trusted side evaluates the weights.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from mtkit.allocator import keep_heap_mapped
from mtkit.constants import PAD_IDX
from mtkit.training import Recipe, default_device, train


def unflatten(flat: Tensor, lengths: Tensor) -> list[list[int]]:
    """Split a 1-D id tensor into sequences of the given lengths.

    Args:
        flat: (N,) all ids, concatenated.
        lengths: (S,) length of each sequence.

    Returns:
        S lists of ids.
    """
    values = flat.tolist()
    sequences, start = [], 0
    for length in lengths.tolist():
        sequences.append(values[start : start + length])
        start += length
    return sequences


def flatten(sequences: list[list[int]]) -> tuple[Tensor, Tensor]:
    """Inverse of `unflatten`: (flat ids (N,), lengths (S,)) as int64 tensors."""
    flat = torch.tensor([i for seq in sequences for i in seq], dtype=torch.long)
    return flat, torch.tensor([len(seq) for seq in sequences], dtype=torch.long)


@dataclass
class _Pairs:
    src: list[list[int]]
    tgt: list[list[int]]


class ModelSession(nn.Module):
    """The submission's model with its own masks: what the trusted side may ask of it.

    The trusted side reads the weights (`state`) and compares `logits` with the reference
    architecture's; it never scores anything this class computes, since student code can replace it.
    """

    def __init__(
        self,
        model: nn.Module,
        padding_mask_fn: Callable[..., Tensor],
        look_ahead_mask_fn: Callable[..., Tensor],
        pad_idx: int = PAD_IDX,
    ) -> None:
        super().__init__()
        self.model = model
        self.padding_mask_fn = padding_mask_fn
        self.look_ahead_mask_fn = look_ahead_mask_fn
        self.pad_idx = int(pad_idx)

    def logits(self, src: Tensor, tgt: Tensor, src_mask: Tensor, tgt_mask: Tensor) -> Tensor:
        """The model's teacher-forced logits (eval mode is set by the caller)."""
        logits: Tensor = self.model(src, tgt, src_mask, tgt_mask)
        return logits


class TrainingSession(ModelSession):
    """Holds the student's model and trains it, pausing at evaluation points for the grader."""

    def __init__(
        self,
        model_cls: Callable[..., nn.Module],
        padding_mask_fn: Callable[..., Tensor],
        look_ahead_mask_fn: Callable[..., Tensor],
        loss_fn: Callable[..., Tensor],
        model_args: list[Any],
        recipe: dict[str, Any],
        label_smoothing: float,
        src_flat: Tensor,
        src_lengths: Tensor,
        tgt_flat: Tensor,
        tgt_lengths: Tensor,
        threads: int = 1,
        pad_idx: int = PAD_IDX,
    ) -> None:
        torch.set_num_threads(max(1, int(threads)))
        keep_heap_mapped()  # a third of training's CPU time went to page faults without it
        torch.manual_seed(int(recipe.get("seed", 0)))  # the model's initial weights
        super().__init__(model_cls(*model_args), padding_mask_fn, look_ahead_mask_fn, pad_idx)
        self.loss_fn = loss_fn
        self.recipe = Recipe(**recipe)
        self.label_smoothing = float(label_smoothing)
        self.pairs = _Pairs(unflatten(src_flat, src_lengths), unflatten(tgt_flat, tgt_lengths))
        self._thread: threading.Thread | None = None
        self._events: queue.Queue[Any] = queue.Queue()  # training thread -> requests
        self._decisions: queue.Queue[float] = queue.Queue()  # trusted BLEU -> training thread
        self._progress = {"step": 0, "epochs": 0.0}

    def forward(self) -> dict[str, Any]:
        """Train until the next evaluation point (or the end) and report where training stands.

        Training runs in a background thread with the submission's masks and loss under the
        grader's recipe. At each of the recipe's evaluation points it pauses: this call returns,
        the trusted side reads the weights (`state`), measures BLEU itself and answers with
        `report_bleu`, which resumes training (or ends it once the target is reached).

        Returns:
            {"done": bool, "step", "epochs"}; when done also "history" (JSON text of the loss
            log), "stop_reason" and "wall_s".
        """
        if self._thread is None:
            self._thread = threading.Thread(target=self._train, name="training", daemon=True)
            self._thread.start()
        event = self._events.get()
        if isinstance(event, BaseException):
            raise event
        report: dict[str, Any] = event
        return report

    def report_bleu(self, bleu: float) -> bool:
        """The trusted side's BLEU for the paused evaluation point; training resumes.

        Returns:
            True (an acknowledgement).
        """
        self._decisions.put(float(bleu))
        return True

    def _train(self) -> None:
        criterion = nn.CrossEntropyLoss(reduction="none", label_smoothing=self.label_smoothing)
        pad = self.pad_idx

        def pause_for_evaluation(model: nn.Module) -> float:
            # The trusted side evaluates now; block until it answers.
            self._events.put({"done": False, "step": self._progress["step"], "epochs": self._progress["epochs"]})
            return self._decisions.get()

        try:
            result = train(
                self.model,
                self.pairs,
                self.recipe,
                src_mask_fn=lambda src: self.padding_mask_fn(src, pad),
                tgt_mask_fn=lambda tgt: self.look_ahead_mask_fn(tgt, pad),
                loss_fn=self._counting_loss(criterion),
                evaluate=pause_for_evaluation,
                device=default_device(),
                progress=False,
                pad_idx=pad,
            )
        except BaseException as error:  # noqa: BLE001 - handed to the request that waits
            self._events.put(error)
            return
        self.model.to("cpu")  # the trusted side reads the weights from here
        self._events.put(
            {
                "done": True,
                "history": json.dumps(result.history),
                "step": result.steps,
                "epochs": float(result.epochs),
                "stop_reason": result.stop_reason,
                "wall_s": float(result.wall_s),
            }
        )

    def _counting_loss(self, criterion: nn.Module) -> Callable[[Tensor, Tensor], Tensor]:
        batches = len(self.pairs.src) / max(1, self.recipe.batch_size)

        def loss(logits: Tensor, tgt: Tensor) -> Tensor:
            self._progress["step"] += 1
            self._progress["epochs"] = round(self._progress["step"] / batches, 4)
            return self.loss_fn(logits, tgt, criterion)

        return loss
