"""An in-process stand-in for the worker that answers with the reference solution.

The hidden checks talk to "the student" only through the worker's request interface (`has`,
`call`, `new`, `params`, `modules`, `load_state`, `run`). Run on their own, with no submission,
the checks talk to this adapter instead, so the suite grades the reference itself — every check
must pass — and exercises the same request plumbing the sandboxed worker serves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

import assignments.transformer_mt.reference.model
from assignments.transformer_mt.checks.module_checks import CHECKS
from assignments.transformer_mt.checks.probes import probe_namespace
from assignments.transformer_mt.reference import masks
from assignments.transformer_mt.reference.loss import calculate_loss
from autograder.checks.inprocess import ReferenceModuleStudent

# The template's training step, run in a namespace of its own so that the check's stand-ins for
# the mask and loss functions (rebound in the function's globals) take effect, as in a notebook.
_TRAIN_STEP_SOURCE = """
def process_batch_for_train(model, src_batch, tgt_batch, criterion, optimizer):
    src_batch = src_batch.to(device)
    tgt_batch = tgt_batch.to(device)
    src_padding_mask = create_padding_mask_for_attention(src_batch, pad_idx)
    tgt_attention_mask = create_look_ahead_mask_for_attention(tgt_batch, pad_idx)
    decoder_output = model(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask)
    loss = calculate_loss(decoder_output, tgt_batch, criterion)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
"""


def _criterion(spec: Any) -> Any:
    # A TorchObject-like spec ("CrossEntropyLoss", kwargs) becomes the real criterion.
    if hasattr(spec, "kwargs") and hasattr(spec, "name"):
        return {"CrossEntropyLoss": nn.CrossEntropyLoss, "NLLLoss": nn.NLLLoss}[spec.name](**spec.kwargs)
    return spec


class ReferenceStudent(ReferenceModuleStudent):
    """The reference model's classes, masks, loss and the template's training step, in process."""

    def __init__(self, grader_globals: dict[str, Any]) -> None:
        super().__init__(
            assignments.transformer_mt.reference.model, grader_globals, probe_namespace(), CHECKS.reference_with_probes
        )
        self.namespace: dict[str, Any] = {"torch": torch}
        exec(compile(_TRAIN_STEP_SOURCE, "<reference train step>", "exec"), self.namespace)

    # -- names ---------------------------------------------------------------------------------
    def _functions(self) -> dict[str, Any]:
        functions: dict[str, Any] = {
            "create_look_ahead_mask_for_attention": masks.create_look_ahead_mask_for_attention,
            "create_padding_mask_for_attention": masks.create_padding_mask_for_attention,
            "calculate_loss": lambda output, tgt, criterion: calculate_loss(
                output, tgt, _criterion(criterion), pad_idx=self.globals["pad_idx"]
            ),
        }
        self.namespace.update({**self.globals, **functions})
        return {**functions, "process_batch_for_train": self.namespace["process_batch_for_train"]}

    def has(self, name: str) -> bool:
        """Whether the name is one of the functions above or a class of the reference model."""
        return name in self._functions() or super().has(name)

    def function(self, name: str) -> Callable[..., Any]:
        """The reference function of that name (the template's training step included)."""
        found: Callable[..., Any] = self._functions()[name]
        return found

    def convert(self, value: Any) -> Any:
        """A criterion spec becomes the real criterion."""
        return _criterion(value)

    @contextlib.contextmanager
    def building(self, cls: str, substitute: Mapping[str, str]) -> Iterator[Callable[..., Any]]:
        """The reference class, with probes standing in; the Transformer gets the run's languages."""
        with super().building(cls, substitute) as constructor:
            languages = {key: self.globals[key] for key in ("src_language", "tgt_language")}
            yield (lambda *a, **kw: constructor(*a, **{**languages, **kw})) if cls == "Transformer" else constructor
