"""An in-process stand-in for the worker that answers with the reference solution.

The hidden checks talk to "the student" only through the worker's request interface (`has`,
`call`, `new`, `params`, `modules`, `load_state`, `run`). Run on their own, with no submission,
the checks talk to this adapter instead, so the suite grades the reference itself — every check
must pass — and exercises the same request plumbing the sandboxed worker serves.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

import reference.loss
import reference.masks
import reference.model
from assignments.transformer_mt.checks.probes import probe_namespace, reference_with_probes

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


class ReferenceStudentError(Exception):
    """An error raised by the reference under a check (a bug in the check or the reference)."""


def _criterion(spec: Any) -> Any:
    # A TorchObject-like spec ("CrossEntropyLoss", kwargs) becomes the real criterion.
    if hasattr(spec, "kwargs") and hasattr(spec, "name"):
        return {"CrossEntropyLoss": nn.CrossEntropyLoss, "NLLLoss": nn.NLLLoss}[spec.name](**spec.kwargs)
    return spec


class ReferenceStudent:
    """Implements the worker's request interface with the reference package, in process."""

    def __init__(self, grader_globals: dict[str, Any]) -> None:
        self.globals = dict(grader_globals)
        self.objects: dict[int, Any] = {}
        self.helpers = probe_namespace()
        self.namespace: dict[str, Any] = {"torch": torch}
        exec(compile(_TRAIN_STEP_SOURCE, "<reference train step>", "exec"), self.namespace)

    # -- names ---------------------------------------------------------------------------------
    def _functions(self) -> dict[str, Any]:
        g = self.globals
        functions = self._reference_functions()
        self.namespace.update({**g, **functions})
        return {**functions, "process_batch_for_train": self.namespace["process_batch_for_train"]}

    def _reference_functions(self) -> dict[str, Any]:
        g = self.globals
        return {
            "create_look_ahead_mask_for_attention": lambda tgt, pad_idx: (
                reference.masks.create_look_ahead_mask_for_attention(tgt, pad_idx)
            ),
            "create_padding_mask_for_attention": lambda batch, pad_idx: (
                reference.masks.create_padding_mask_for_attention(batch, pad_idx)
            ),
            "calculate_loss": lambda output, tgt, criterion: reference.loss.calculate_loss(
                output, tgt, _criterion(criterion), pad_idx=g["pad_idx"]
            ),
        }

    _CLASSES = ("DecoderLayer", "Decoder", "Transformer", "Encoder", "EncoderLayer", "MultiHeadAttention")

    def has(self, name: str) -> bool:
        """Whether the name is defined."""
        return name in self._functions() or name in self._CLASSES

    # -- requests ------------------------------------------------------------------------------
    def _resolve(self, value: Any) -> Any:
        if type(value).__name__ == "Global":
            return self._functions()[value.name]
        if hasattr(value, "handle"):
            return self.objects[value.handle]
        if isinstance(value, list):
            return [self._resolve(v) for v in value]
        return _criterion(value)

    def call(
        self,
        func: str,
        args: list[Any],
        *,
        kwargs: dict[str, Any] | None = None,
        set_globals: dict[str, Any] | None = None,
        grad_wrt: list[int] | None = None,
        seed: int = 0,
        timeout_s: float | None = None,
    ) -> Any:
        """Call a reference function; with grad_wrt, also return d(sum of output)/d(args)."""
        self.globals.update(set_globals or {})
        args = [self._resolve(a) for a in args]
        if grad_wrt:
            args = [a.detach().clone().requires_grad_(True) if i in grad_wrt else a for i, a in enumerate(args)]
        torch.manual_seed(seed)
        if func.startswith("grader_helpers:"):
            return self.helpers[func.partition(":")[2]](*args, **(kwargs or {}))
        output = self._functions()[func](*args, **(kwargs or {}))
        if not grad_wrt:
            return output.detach() if isinstance(output, Tensor) else output
        output.sum().backward()
        return {"output": output.detach(), "grads": [args[i].grad for i in grad_wrt]}

    def new(
        self,
        cls: str,
        args: list[Any],
        kwargs: dict[str, Any] | None = None,
        *,
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        substitute: dict[str, str] | None = None,
    ) -> int:
        """Construct a reference module (optionally with probes standing in for classes)."""
        self.globals.update(set_globals or {})
        kwargs = dict(kwargs or {})
        if cls == "Transformer":
            kwargs.setdefault("src_language", self.globals["src_language"])
            kwargs.setdefault("tgt_language", self.globals["tgt_language"])
        with reference_with_probes(substitute or {}):
            torch.manual_seed(seed)
            module = getattr(reference.model, cls)(*args, **kwargs)
        handle = len(self.objects) + 1
        self.objects[handle] = module
        return handle

    def params(self, handle: int) -> list[tuple[str, list[int]]]:
        """named_parameters() in registration order."""
        return [(n, list(p.shape)) for n, p in self.objects[handle].named_parameters()]

    def modules(self, handle: int) -> list[tuple[str, str]]:
        """named_modules() as (name, class name)."""
        return [(n, type(m).__name__) for n, m in self.objects[handle].named_modules()]

    def load_state(self, handle: int, tensors: dict[str, Tensor], strict: bool = True) -> None:
        """Load parameters by name."""
        self.objects[handle].load_state_dict(tensors, strict=strict)

    def run(
        self,
        handle: int,
        method: str,
        args: list[Any],
        *,
        mode: str,
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        grad: Tensor | None = None,
    ) -> Any:
        """Run a module method in eval or train mode; with grad, backprop it and return grads."""
        self.globals.update(set_globals or {})
        module = self.objects[handle]
        module.train(mode == "train")
        args = [self._resolve(a) for a in args]
        target: Any = module
        for part in filter(None, method.split(".")):  # dotted paths reach submodules, as in the worker
            if not (part == "forward" and isinstance(target, nn.Module)):
                target = getattr(target, part)
        torch.manual_seed(seed)
        if grad is None:
            with torch.no_grad():
                return target(*args)
        module.zero_grad(set_to_none=True)
        output = target(*args)
        output.backward(grad)
        grads = {n: (p.grad.detach().clone() if p.grad is not None else None) for n, p in module.named_parameters()}
        return {"output": output.detach(), "param_grads": grads}
