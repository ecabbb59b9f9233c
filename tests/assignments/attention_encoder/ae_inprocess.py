"""A trusted in-process stand-in for the worker, running test fixture code (never student code).

It serves the worker's request interface (`has`, `call`, `new`, `params`, `modules`,
`load_state`, `run`) from a namespace where a fixture's source was executed, with the grader's
helpers in their own namespace and `substitute` rebinding names while constructing, as the
sandboxed worker does. Fast enough to run every fixture in the default suite; one test runs the
real sandboxed worker as well.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from assignments.attention_encoder.checks.helpers import helpers_namespace


class InProcessStudent:
    """The worker's request interface over a namespace holding fixture code."""

    def __init__(self, source: str, grader_globals: dict[str, Any]) -> None:
        self.namespace: dict[str, Any] = {"__name__": "submission"}
        exec(compile(source, "<fixture>", "exec"), self.namespace)  # trusted test fixtures only
        self.namespace.update(grader_globals)
        self.helpers = helpers_namespace()
        self.objects: dict[int, Any] = {}

    def has(self, name: str) -> bool:
        """Whether the fixture defines the name."""
        return name in self.namespace

    def _resolve(self, value: Any) -> Any:
        if type(value).__name__ == "Global":
            return self.namespace[value.name]
        if type(value).__name__ == "Ref":
            return self.objects[value.handle]
        return value

    def call(self, func: str, args: list[Any], *, kwargs: dict[str, Any] | None = None, **_: Any) -> Any:
        """Call a fixture function or a grader helper ("grader_helpers:name")."""
        args = [self._resolve(a) for a in args]
        target = self.helpers[func.partition(":")[2]] if func.startswith("grader_helpers:") else self.namespace[func]
        return target(*args, **(kwargs or {}))

    def new(
        self,
        cls: str,
        args: list[Any],
        kwargs: dict[str, Any] | None = None,
        *,
        seed: int = 0,
        substitute: dict[str, str] | None = None,
        **_: Any,
    ) -> int:
        """Construct a fixture class with helper classes standing in for some names."""
        missing = object()
        saved = {name: self.namespace.get(name, missing) for name in substitute or {}}
        try:
            for name, helper in (substitute or {}).items():
                self.namespace[name] = self.helpers[helper]
            torch.manual_seed(seed)
            module = self.namespace[cls](*args, **(kwargs or {}))
        finally:
            for name, value in saved.items():
                if value is missing:
                    self.namespace.pop(name, None)
                else:
                    self.namespace[name] = value
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
        """load_state_dict semantics."""
        self.objects[handle].load_state_dict(tensors, strict=strict)

    def run(
        self,
        handle: int,
        method: str,
        args: list[Any],
        *,
        mode: str = "eval",
        seed: int = 0,
        grad: Tensor | None = None,
        grad_wrt: list[int] | None = None,
        **_: Any,
    ) -> Any:
        """Run a module method as the worker does (eval: no_grad unless gradients are wanted)."""
        module = self.objects[handle]
        target: Any = module
        for part in filter(None, method.split(".")):
            if not (part == "forward" and isinstance(target, nn.Module)):
                target = getattr(target, part)
        module.train(mode == "train")
        args = [self._resolve(a) for a in args]
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
            "param_grads": {n: p.grad for n, p in module.named_parameters()},
        }
        if grad_wrt:
            result["grads"] = [args[i].grad for i in grad_wrt]
        return result
