"""The Ray executor: one Ray task per submission, placed by the resources its parts need.

Each task runs the same `grading.grade_one` as the local executor on a node of the cluster: the
engine starts its sandboxed worker processes there (student code never runs in the Ray worker's
own process) and the task returns the result as the engine's JSON text, which the driver parses
and hands to the same resumable writer. Ray retries a task whose node or worker died. The
grader's code reaches the nodes as private bytes (`ray_code`), not as Ray's working_dir.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ray

import autograder.executors.ray_code as ray_code
from autograder.assignment import bundled_data_of
from autograder.config import PROJECT_ROOT, GraderConfig
from autograder.executors.base import ClusterTooSmall, ResultCallback
from autograder.grading import GradeFunction, Submission, grade_one, grader_error_result
from autograder.reports.submission_json import dumps_stable
from autograder.results import SubmissionResult
from autograder.submission_snapshot import read_submission, write_copy

TASK_RETRIES = 3  # a task whose node or worker process died runs again elsewhere


def _grade_remote(
    grade_function: GradeFunction,
    config: GraderConfig,
    name: str,
    data: bytes,
    sides: list[tuple[str, bytes | str]],
    label: str,
    stem: str,
    parts: list[str] | None,
) -> str:
    """Body of a Ray task: write the submission (and its side files) into a private folder of
    this node, grade it there, return the result as JSON text."""
    with tempfile.TemporaryDirectory(prefix="grading-") as folder:
        copy = write_copy(Path(folder, "submission"), name, data, sides)
        result = grade_one(grade_function, Submission(copy, label, stem), config, parts)
    return dumps_stable(result.to_json())


def code_excludes(root: Path = PROJECT_ROOT) -> list[str]:
    """What the shipped code leaves out: the patterns of executors/ship.ignore and of `root`'s .gitignore.

    Args:
        root: the checkout.

    Returns:
        Patterns for `ray_code.build_archive`.
    """
    patterns = [*ignore_patterns(Path(__file__).with_name("ship.ignore")), *ignore_patterns(root / ".gitignore")]
    return list(dict.fromkeys(patterns))


def ignore_patterns(path: Path) -> list[str]:
    """The simple patterns of an ignore file: its lines but comments, negations and blank ones.

    Args:
        path: a .gitignore-style file (missing: no patterns).

    Returns:
        The patterns, without leading or trailing slashes.
    """
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [line.strip().strip("/") for line in lines if line.strip() and not line.startswith(("#", "!"))]


def task_resources(config: GraderConfig, parts: Sequence[str] | None, gpu_resource: str = "GPU") -> dict[str, Any]:
    """Ray resource options of one submission's task.

    Unit parts need one CPU (their sandboxed worker runs one thread). With the training part the
    task asks for what the assignment's training section needs (`TrainingSection.ray_options`):
    CPUs, and a GPU as `num_gpus`, or as units of the custom resource `gpu_resource`.

    Args:
        config: the validated configuration (its training section resolved by `prepare`).
        parts: the selected parts (None: all).
        gpu_resource: "GPU" or the name of a custom resource the GPU nodes advertise.

    Returns:
        Keyword arguments of `.options()`.
    """
    part = config.training_part()
    training = part is not None and part not in config.disabled_parts() and (parts is None or part in parts)
    if not training:
        return {"num_cpus": 1}
    options = dict(config.training.ray_options())  # the assignment's training section says what it needs
    gpus = options.pop("gpu", 0)
    if gpus:
        if gpu_resource == "GPU":
            options["num_gpus"] = gpus
        else:
            options["resources"] = {gpu_resource: gpus}
    return options


def _fits(options: dict[str, Any], resources: dict[str, float]) -> bool:
    """Whether one node's resources cover a task's request."""
    needs = {"CPU": options.get("num_cpus", 0), "GPU": options.get("num_gpus", 0), **options.get("resources", {})}
    return all(resources.get(name, 0) >= amount for name, amount in needs.items())


def check_feasible(options: dict[str, Any]) -> None:
    """Refuse a request that no live node of the cluster can meet (Ray would wait for it forever).

    Args:
        options: from `task_resources`.

    Raises:
        ClusterTooSmall: naming the request and what the nodes offer.
    """
    offered = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
    if any(_fits(options, resources) for resources in offered):
        return
    names = {name for resources in offered for name in resources}
    kinds = sorted(name for name in names if not name.startswith(("node:", "memory", "object_store")))
    raise ClusterTooSmall(
        f"no node of the Ray cluster can run a grading task that asks for {options} "
        f"(the nodes offer: {', '.join(kinds) or 'nothing'}); add such a node, or change "
        "--ray-gpu-resource / the training settings"
    )


class RayExecutor:
    """Grades on a Ray cluster (`address` "auto", "ray://host:10001", or None for a local Ray)."""

    name = "ray"  # recorded with each stored grade

    def __init__(self, address: str | None = None, gpu_resource: str = "GPU") -> None:
        """Args:
        address: the cluster; None starts (or reuses) a Ray on this machine.
        gpu_resource: what a gpu-profile training task asks for (see `task_resources`).
        """
        self.address, self.gpu_resource = address, gpu_resource
        self.data_env: str | None = None  # the graded assignment's data variable (set by `prepare`)
        self._temp_dir: str | None = None  # the private folder of a Ray started here

    def _connect(self) -> None:
        if ray.is_initialized():  # e.g. a cluster the caller connected to
            return
        if self.address is None:
            self._start_private_ray()
            return
        ray.init(address=self.address, runtime_env=self._runtime_env(), log_to_driver=False)

    def _start_private_ray(self) -> None:
        """Start a Ray on this machine whose files nobody else can read: its session folder (logs,
        spilled objects) lies in a new 0700 folder; `close` removes it all."""
        # Ray makes its own folder mode 777 and its files 644: the 0700 parent closes them all.
        # (Not a umask: the grader's files in the Ray workers must stay readable by the root
        # jail's sandbox user.) Short, as Ray's socket paths have a length limit.
        self._temp_dir = tempfile.mkdtemp(prefix="ray-")
        atexit.register(self.close)
        ray.init(
            runtime_env=self._runtime_env(),
            log_to_driver=False,
            include_dashboard=False,
            _temp_dir=os.path.join(self._temp_dir, "r"),
        )

    def close(self) -> None:
        """Stop the Ray this executor started and delete its folder (nothing for a cluster's,
        see docs/SCALE.md for the nodes' own)."""
        if self._temp_dir is None:
            return
        if ray.is_initialized():
            ray.shutdown()
        shutil.rmtree(self._temp_dir, ignore_errors=True)
        self._temp_dir = None

    def _runtime_env(self) -> dict[str, Any]:
        # No working_dir: Ray would unpack the code world-readable on every node (see `ray_code`).
        runtime_env: dict[str, Any] = {"env_vars": {"OMP_WAIT_POLICY": "PASSIVE"}}
        data = self.data_env
        if data and os.environ.get(data) and self.address is None:  # a local Ray shares the assignment's data
            runtime_env["env_vars"][data] = os.environ[data]
        return runtime_env

    def prepare(self, config: GraderConfig) -> GraderConfig:
        """Connect, and resolve the training section's machine-dependent choices for the cluster
        (`TrainingSection.resolved_for`: whether its nodes offer the GPU resource), so that every
        node trains the same way.

        Args:
            config: the validated configuration.

        Returns:
            The configuration, or a copy with the resolved training section.
        """
        bundled = bundled_data_of(config)
        self.data_env = bundled.env if bundled is not None else None
        self._connect()
        has_gpu = ray.cluster_resources().get(self.gpu_resource, 0) > 0
        training = config.training.resolved_for(has_gpu)
        return config if training is config.training else config.model_copy(update={"training": training})

    def run(
        self,
        submissions: Sequence[Submission],
        config: GraderConfig,
        parts: list[str] | None,
        grade_function: GradeFunction,
        on_result: ResultCallback,
    ) -> None:
        """One task per submission; `on_result(index, result)` in the driver as each returns.

        Args:
            submissions: the submissions to grade.
            config: the configuration from `prepare`.
            parts: the selected parts (None: all).
            grade_function: the engine's grade function (picklable: a module-level function, or one
                bound to the assignment with functools.partial).
            on_result: called once per submission, in completion order.
        """
        self._connect()
        options = task_resources(config, parts, self.gpu_resource)
        check_feasible(options)
        submit = self._submitter(grade_function, config, options)
        pending = {}
        for index, submission in enumerate(submissions):
            # the same files, read the same way, as the local executor grades (a link stays one)
            data, sides, _ = read_submission(submission.path, submission.sidecars)
            pending[submit(submission.path.name, data, sides, submission.label, submission.stem, parts)] = index
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                on_result(index, self._result(ref, submissions[index], config, parts))

    def _submitter(
        self, grade_function: GradeFunction, config: GraderConfig, options: dict[str, Any]
    ) -> Callable[..., Any]:
        """A function that starts one submission's task and returns its reference.

        The code is zipped and sealed once per batch and put in the object store once; each task
        unpacks it privately (`ray_code.run_with_private_code`) before it loads the grade function
        and the configuration (which name the grader's classes).
        """
        # The bootstrap must reach the nodes by value: there the grader's code is not importable yet.
        ray.cloudpickle.register_pickle_by_value(ray_code)
        remote = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False)(ray_code.run_with_private_code)
        sealed, key = ray_code.seal(ray_code.build_archive(PROJECT_ROOT, code_excludes()))
        code = ray.put(sealed)
        shared = ray.put(ray.cloudpickle.dumps((grade_function, config)))
        entry = f"{__name__}:{_grade_remote.__name__}"
        return lambda *args: remote.options(**options).remote(code, key, entry, shared, *args)

    @staticmethod
    def _result(ref: Any, submission: Submission, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
        """The task's JSON as a result; a task that failed for good becomes a grader error."""
        try:
            result = SubmissionResult.from_json(json.loads(ray.get(ref)))
        except Exception as error:  # retries exhausted, or JSON that is not a result
            return grader_error_result(submission.label, config, parts, error)
        result.submission = submission.label
        return result
