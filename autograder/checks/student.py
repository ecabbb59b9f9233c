"""The student side as every check sees it: the requests a check may make of a submission."""

# Two classes serve it: `autograder.sandbox.Worker` (the submission in its sandboxed worker, over
# the wire: only tensors and JSON cross) and `autograder.checks.inprocess.InProcessStudent` (the
# reference solution in process, which the checks grade when their folder runs on its own).
# mypy holds both to this protocol (tests/autograder/checks/test_student_protocol.py).

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from torch import Tensor


@runtime_checkable
class Student(Protocol):
    """What a check calls: look up names, call functions, build modules and run their methods."""

    def has(self, name: str) -> bool:
        """Whether the submission defines `name`."""
        ...

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
        """Call a function of the submission (or `grader_helpers:<name>`); with grad_wrt, also the
        gradients of the output's sum with respect to those arguments ({"output", "grads"})."""
        ...

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
        """Construct an object of the submission's class `cls` and return its handle."""
        ...

    def params(self, handle: int) -> list[tuple[str, list[int]]]:
        """The object's parameters: (name, shape) pairs in registration order."""
        ...

    def modules(self, handle: int) -> list[tuple[str, str]]:
        """The object's submodules: (name, class name) pairs."""
        ...

    def load_state(self, handle: int, tensors: dict[str, Tensor], strict: bool = True) -> None:
        """Load parameters by name (load_state_dict semantics)."""
        ...

    def run(
        self,
        handle: int,
        method: str,
        args: list[Any],
        *,
        mode: Literal["eval", "train"] = "eval",
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        grad: Tensor | None = None,
        grad_wrt: list[int] | None = None,
    ) -> Any:
        """Run a module's method in eval or train mode; with grad or grad_wrt, backpropagate too."""
        ...
