"""The module checks run one forward after building (lazy modules get their shapes); a hung worker is not swallowed."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
import torch

from autograder.checks.modules import ModuleChecks, ModulePart, ModuleTexts
from autograder.checks.support import CheckContext
from autograder.sandbox.errors import WorkerFailure


class _Student:
    """Builds nothing real: records the runs and raises what it is told to on each."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.runs: list[str] = []

    def has(self, name: str) -> bool:
        return True

    def new(self, cls: str, args: list[Any], kwargs: Any = None, **options: Any) -> int:
        return 1

    def run(self, handle: int, method: str, args: list[Any], **options: Any) -> Any:
        self.runs.append(method)
        if self.error is not None:
            raise self.error
        return torch.zeros(1)


PART = ModulePart(
    cls="M", ctor_args=lambda p: [], make_cases=lambda gen: [[torch.zeros(1)]], output_shape=lambda c: (1,)
)
CHECKS = ModuleChecks(ModuleTexts(lambda key, **fields: key, "x"), ModuleType("reference"), dict)


def test_a_built_module_runs_once_before_it_is_inspected_and_a_student_error_is_left_to_the_checks() -> None:
    for error in (None, RuntimeError("student bug")):
        student = _Student(error)
        ctx = CheckContext(student=student)  # type: ignore[arg-type]
        assert CHECKS.student_module(ctx, PART, 0.1) == 1
        assert CHECKS.student_module(ctx, PART, 0.1) == 1  # cached: built and run once
        assert student.runs == ["forward"]


def test_a_worker_that_hung_while_materialising_fails_at_once() -> None:
    ctx = CheckContext(student=_Student(WorkerFailure("timed out after 10 s")))  # type: ignore[arg-type]
    with pytest.raises(WorkerFailure):
        CHECKS.student_module(ctx, PART, 0.1)
