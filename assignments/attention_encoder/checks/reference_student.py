"""An in-process stand-in for the worker that answers with Part 1's reference.

The hidden checks talk to "the student" only through the worker's request interface (`has`,
`call`, `new`, `params`, `modules`, `load_state`, `run`). Run on their own, with no submission,
the checks talk to this adapter instead, so the suite grades the reference itself (every check
must pass) through the same requests the sandboxed worker serves.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

import reference.attention_encoder as part1
import reference.model
from assignments.attention_encoder.checks.helpers import helpers_namespace
from assignments.attention_encoder.checks.probes import reference_with_probes


class ReferenceStudent:
    """Implements the worker's request interface with the reference, in process."""

    NAMES = (*part1.GRADED, *part1.GIVEN)

    def __init__(self, grader_globals: dict[str, Any]) -> None:
        self.globals = dict(grader_globals)
        self.objects: dict[int, Any] = {}
        self.helpers = helpers_namespace()

    def has(self, name: str) -> bool:
        """Whether the name is defined."""
        return name in self.NAMES

    def _resolve(self, value: Any) -> Any:
        if type(value).__name__ == "Global":
            return getattr(part1, value.name)
        if type(value).__name__ == "Ref" or (hasattr(value, "handle") and not isinstance(value, Tensor)):
            return self.objects[value.handle]
        if isinstance(value, list):
            return [self._resolve(v) for v in value]
        return value

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
        """Call a reference function or a grader helper ("grader_helpers:name")."""
        self.globals.update(set_globals or {})
        args = [self._resolve(a) for a in args]
        torch.manual_seed(seed)
        if func.startswith("grader_helpers:"):
            return self.helpers[func.partition(":")[2]](*args, **(kwargs or {}))
        output = getattr(part1, func)(*args, **(kwargs or {}))
        return output.detach() if isinstance(output, Tensor) else output

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
        with reference_with_probes(substitute or {}):
            torch.manual_seed(seed)
            module = getattr(reference.model, cls)(*args, **(kwargs or {}))
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
        grad_wrt: list[int] | None = None,
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
        for index in grad_wrt or []:
            args[index] = args[index].detach().clone().requires_grad_(True)
        torch.manual_seed(seed)
        if grad is None and not grad_wrt:
            with torch.no_grad():
                return target(*args)
        module.zero_grad(set_to_none=True)
        output = target(*args)
        output.backward(grad if grad is not None else torch.ones_like(output))
        result: dict[str, Any] = {
            "output": output.detach(),
            "param_grads": {
                n: (p.grad.detach().clone() if p.grad is not None else None) for n, p in module.named_parameters()
            },
        }
        if grad_wrt:
            result["grads"] = [args[i].grad for i in grad_wrt]
        return result
