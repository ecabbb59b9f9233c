"""What every executor is: the protocol the batch grades through, and the errors executors raise."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the signatures only
    from autograder.config import GraderConfig
    from autograder.grading import GradeFunction, Submission
    from autograder.results import SubmissionResult

# Called in the driver process as each submission finishes: (index in the batch, its result).
ResultCallback = Callable[[int, "SubmissionResult"], Any]


class ClusterTooSmall(RuntimeError):
    """No node of the cluster can run a grading task as configured."""


class Executor(Protocol):
    """Grades submissions somewhere and hands every result back through `on_result`."""

    def prepare(self, config: GraderConfig) -> GraderConfig:
        """The configuration as this executor's nodes will grade with it (e.g. the training
        profile "auto" resolved for the cluster); the store's inputs digest is taken from it."""

    def run(
        self,
        submissions: Sequence[Submission],
        config: GraderConfig,
        parts: list[str] | None,
        grade_function: GradeFunction,
        on_result: ResultCallback,
    ) -> None:
        """Grade every submission; call `on_result` once per submission, in completion order."""
