"""The worker's request interface served in process, from trusted code (a reference or a test fixture)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

import torch
from torch import Tensor, nn


class InProcessStudent:
    """Answers the hidden checks' requests (`has`, `call`, `new`, `params`, `modules`,
    `load_state`, `run`) with objects in this process, the way the sandboxed worker does.

    Only trusted code may stand behind it (an assignment's reference, the tests' fixtures): it
    runs in the grader's own process. An assignment subclasses it and says where names come
    from (`has`, `function`, `building`); the requests themselves are the same for every
    assignment.
    """

    def __init__(self, grader_globals: Mapping[str, Any], helpers: Mapping[str, Any]) -> None:
        """Start with no objects.

        Args:
            grader_globals: the names the grader provides (pad_idx, device, ...).
            helpers: the grader helpers, by name (requests name them "grader_helpers:name").
        """
        self.globals = dict(grader_globals)
        self.helpers = helpers
        self.objects: dict[int, Any] = {}

    # -- where names come from (an assignment's answerer says) ----------------------------------
    def has(self, name: str) -> bool:
        """Whether the student side defines the name."""
        raise NotImplementedError

    def function(self, name: str) -> Callable[..., Any]:
        """The function (or other global) the student side defines under a name."""
        raise NotImplementedError

    @contextlib.contextmanager
    def building(self, cls: str, substitute: Mapping[str, str]) -> Iterator[Callable[..., Any]]:
        """While open: the class to construct, with the named helpers standing in for names it uses."""
        raise NotImplementedError
        yield  # pragma: no cover - makes this a generator for contextmanager

    def convert(self, value: Any) -> Any:
        """An argument as the student side takes it (after handles and globals are resolved)."""
        return value

    def set_globals(self, values: Mapping[str, Any] | None) -> None:
        """Set grader globals for this and later requests.

        Unlike the worker, which scopes a request's globals to that request, they stay set here;
        only trusted code (a reference, a fixture) stands behind this answerer, and both
        assignments' checks pass on their references with it.
        """
        self.globals.update(values or {})

    # -- requests --------------------------------------------------------------------------------
    def _resolve(self, value: Any) -> Any:
        if type(value).__name__ == "Global":
            return self.function(value.name)
        if hasattr(value, "handle") and not isinstance(value, Tensor):
            return self.objects[value.handle]
        if isinstance(value, list):
            return [self._resolve(v) for v in value]
        return self.convert(value)

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
        """Call a function or a grader helper ("grader_helpers:name").

        Args:
            func: the function's name.
            args: positional arguments (handles and globals are resolved).
            kwargs: keyword arguments.
            set_globals: grader globals to set first.
            grad_wrt: indices of float tensor arguments to differentiate the output's sum by.
            seed: the torch seed set before the call.
            timeout_s: ignored (nothing here can hang: the code is trusted).

        Returns:
            The output; with grad_wrt, {"output": output, "grads": [gradient per index]}.
        """
        self.set_globals(set_globals)
        args = [self._resolve(a) for a in args]
        for index in grad_wrt or []:
            args[index] = args[index].detach().clone().requires_grad_(True)
        torch.manual_seed(seed)
        if func.startswith("grader_helpers:"):
            return self.helpers[func.partition(":")[2]](*args, **(kwargs or {}))
        output = self.function(func)(*args, **(kwargs or {}))
        if not grad_wrt:
            return output.detach() if isinstance(output, Tensor) else output
        output.backward(torch.ones_like(output))
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
        """Construct an object (helpers standing in for the names in `substitute`) and keep it.

        Args:
            cls: the class's name.
            args: constructor arguments.
            kwargs: keyword arguments.
            seed: the torch seed set before constructing.
            set_globals: grader globals to set first.
            substitute: name -> helper class used while constructing.

        Returns:
            The object's handle.
        """
        self.set_globals(set_globals)
        with self.building(cls, substitute or {}) as make:
            torch.manual_seed(seed)
            module = make(*args, **(kwargs or {}))
        handle = len(self.objects) + 1
        self.objects[handle] = module
        return handle

    def params(self, handle: int) -> list[tuple[str, list[int]]]:
        """named_parameters() as (name, shape) in registration order."""
        return [(n, list(p.shape)) for n, p in self.objects[handle].named_parameters()]

    def modules(self, handle: int) -> list[tuple[str, str]]:
        """named_modules() as (name, class name)."""
        return [(n, type(m).__name__) for n, m in self.objects[handle].named_modules()]

    def load_state(self, handle: int, tensors: dict[str, Tensor], strict: bool = True) -> None:
        """Load parameters by name (load_state_dict semantics)."""
        self.objects[handle].load_state_dict(tensors, strict=strict)

    def run(
        self,
        handle: int,
        method: str,
        args: list[Any],
        *,
        mode: str = "eval",
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        grad: Tensor | None = None,
        grad_wrt: list[int] | None = None,
    ) -> Any:
        """Run a module's method in eval or train mode; with grad or grad_wrt, backpropagate too.

        Args:
            handle: the module.
            method: the method, a dotted path through submodules ("norm1.forward").
            args: positional arguments (handles and globals are resolved).
            mode: "eval" or "train".
            seed: the torch seed set before running.
            set_globals: grader globals to set first.
            grad: the upstream gradient of the output (default: ones, when grad_wrt is given).
            grad_wrt: indices of float tensor arguments whose gradients to return.

        Returns:
            The output; with grads, {"output", "param_grads": {name: grad}, "grads" (with grad_wrt)}.
        """
        self.set_globals(set_globals)
        module = self.objects[handle]
        module.train(mode == "train")
        args = [self._resolve(a) for a in args]
        target: Any = module
        for part in filter(None, method.split(".")):
            # `forward` on a module is reached through __call__, as in the worker (hooks run).
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


class ReferenceModuleStudent(InProcessStudent):
    """Answers with the definitions of one trusted module: an assignment's reference."""

    def __init__(
        self,
        module: ModuleType,
        grader_globals: Mapping[str, Any],
        helpers: Mapping[str, Any] | None = None,
        stand_ins: Callable[[Mapping[str, str]], contextlib.AbstractContextManager[None]] | None = None,
    ) -> None:
        """Serve the module's functions and classes.

        Args:
            module: the reference module (trusted code).
            grader_globals: the names the grader provides.
            helpers: the grader helpers, by name.
            stand_ins: substitute -> a context in which the probes stand in for the reference's
                classes (`ModuleChecks.reference_with_probes`); None: nothing is substituted.
        """
        super().__init__(grader_globals, helpers or {})
        self.module = module
        self.stand_ins = stand_ins

    def has(self, name: str) -> bool:
        """Whether the module defines a function or class of that name."""
        return callable(getattr(self.module, name, None))

    def function(self, name: str) -> Callable[..., Any]:
        """The module's function (or class) of that name."""
        found: Callable[..., Any] = getattr(self.module, name)
        return found

    @contextlib.contextmanager
    def building(self, cls: str, substitute: Mapping[str, str]) -> Iterator[Callable[..., Any]]:
        """The module's class, built with the probes standing in for the substituted classes."""
        with self.stand_ins(substitute) if self.stand_ins else contextlib.nullcontext():
            yield getattr(self.module, cls)
