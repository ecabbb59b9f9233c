"""Executors: where a batch's gradings run (local process pool, or a Ray cluster)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # runtime imports stay lazy: batch imports this package, and ray is optional
    from autograder.batch import GradeFunction, Submission
    from autograder.config import GraderConfig
    from autograder.results import SubmissionResult

EXECUTORS = ("local", "ray")
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


def make_executor(name: str, jobs: int = 1, ray_address: str | None = None, ray_gpu_resource: str = "GPU") -> Executor:
    """The executor called `name` (ray is imported only when asked for).

    Args:
        name: "local" (a process pool of `jobs` workers) or "ray".
        jobs: parallel gradings of the local executor.
        ray_address: Ray's address ("auto", "ray://host:10001"); None starts a local Ray.
        ray_gpu_resource: the resource a gpu-profile training task asks one unit of ("GPU":
            num_gpus=1; another name: a custom resource the GPU nodes advertise).

    Returns:
        The executor.

    Raises:
        ValueError: an unknown name.
    """
    if name == "local":
        from autograder.executors.local import LocalExecutor

        return LocalExecutor(jobs)
    if name == "ray":
        from autograder.executors.ray import RayExecutor

        return RayExecutor(ray_address, gpu_resource=ray_gpu_resource)
    raise ValueError(f"unknown executor {name!r} (known: {', '.join(EXECUTORS)})")
