"""Executors: where a batch's gradings run (local process pool, or a Ray cluster)."""

from __future__ import annotations

from autograder.executors.base import ClusterTooSmall, Executor, ResultCallback

__all__ = ["EXECUTORS", "ClusterTooSmall", "Executor", "ResultCallback", "make_executor"]

EXECUTORS = ("local", "ray")


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
