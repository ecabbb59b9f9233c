"""The local executor: gradings in this process, or in a pool of spawned worker processes."""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from autograder.batch import GradeFunction, Submission, grade_one, grader_error_result
from autograder.config import GraderConfig
from autograder.executors import ResultCallback
from autograder.results import SubmissionResult


class LocalExecutor:
    """`jobs` gradings at a time on this machine (one job: in this very process)."""

    name = "local"  # recorded with each stored grade

    def __init__(self, jobs: int = 1) -> None:
        """Args: jobs, the number of parallel worker processes."""
        self.jobs = max(1, int(jobs))

    def prepare(self, config: GraderConfig) -> GraderConfig:
        """The configuration unchanged: the gradings run on this machine, as configured."""
        return config

    def run(
        self,
        submissions: Sequence[Submission],
        config: GraderConfig,
        parts: list[str] | None,
        grade_function: GradeFunction,
        on_result: ResultCallback,
    ) -> None:
        """Grade every submission; `on_result(index, result)` as each one finishes.

        Args:
            submissions: the submissions to grade.
            config: the validated configuration.
            parts: the selected parts (None: all).
            grade_function: the engine's grade function (picklable when jobs > 1).
            on_result: called in this process once per submission.
        """
        jobs = min(self.jobs, len(submissions))
        if jobs <= 1:
            for index, submission in enumerate(submissions):
                on_result(index, grade_one(grade_function, submission, config, parts))
            return
        _ParallelGrader(grade_function, submissions, config, parts, jobs, on_result).run()


class _ParallelGrader:
    """Grades in worker processes, at most `jobs` in flight; survives a dying worker."""

    def __init__(
        self,
        grade_function: GradeFunction,
        submissions: Sequence[Submission],
        config: GraderConfig,
        parts: list[str] | None,
        jobs: int,
        on_result: ResultCallback,
    ) -> None:
        self.task = (grade_function, config, parts)
        self.submissions, self.jobs, self.on_result = submissions, jobs, on_result
        self.context = multiprocessing.get_context("spawn")  # no fork after torch/threads

    def _record(self, index: int, future: Future[SubmissionResult]) -> bool:
        """Hand on a finished future's result; False when its worker process died."""
        try:
            result = future.result()
        except BrokenProcessPool:
            return False
        except Exception as error:  # e.g. a result that cannot be pickled back
            label = self.submissions[index].label
            result = grader_error_result(label, self.task[1], self.task[2], error)
        self.on_result(index, result)
        return True

    def _submit(self, pool: ProcessPoolExecutor, index: int) -> Future[SubmissionResult]:
        grade_function, config, parts = self.task
        return pool.submit(grade_one, grade_function, self.submissions[index], config, parts)

    def _drain(self, in_flight: dict[Future[SubmissionResult], int], suspects: list[int]) -> None:
        """After the pool broke: keep what finished; what was still running died with it."""
        for future, index in in_flight.items():
            if not self._record(index, future):
                suspects.append(index)

    def _run_pool(self, pending: deque[int], suspects: list[int]) -> None:
        with ProcessPoolExecutor(self.jobs, mp_context=self.context) as pool:
            in_flight: dict[Future[SubmissionResult], int] = {}
            while pending or in_flight:
                while pending and len(in_flight) < self.jobs:
                    try:
                        in_flight[self._submit(pool, pending[0])] = pending[0]
                    except BrokenProcessPool:  # a worker died since the last wait
                        self._drain(in_flight, suspects)
                        return
                    pending.popleft()
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                pool_broken = False
                for future in done:
                    index = in_flight.pop(future)
                    if not self._record(index, future):
                        suspects.append(index)
                        pool_broken = True
                if pool_broken:
                    self._drain(in_flight, suspects)
                    return

    def _grade_alone(self, index: int) -> SubmissionResult:
        with ProcessPoolExecutor(1, mp_context=self.context) as pool:
            future = self._submit(pool, index)
            try:
                return future.result()
            except BrokenProcessPool:
                reason = "the grading process died (crash or out of memory)"
            except Exception as error:
                reason = f"{type(error).__name__}: {error}"
        return grader_error_result(self.submissions[index].label, self.task[1], self.task[2], reason)

    def run(self) -> None:
        """Grade everything; submissions whose worker died are regraded alone to find the culprit."""
        pending = deque(range(len(self.submissions)))
        suspects: list[int] = []
        while pending:
            self._run_pool(pending, suspects)
        for index in sorted(suspects):
            self.on_result(index, self._grade_alone(index))
