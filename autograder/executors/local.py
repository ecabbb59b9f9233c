"""The local executor: gradings in this process, or in a pool of spawned worker processes."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from types import FrameType

from autograder.config import GraderConfig
from autograder.executors.base import ResultCallback
from autograder.grading import GradeFunction, Submission, grade_one, grader_error_result
from autograder.results import SubmissionResult

# On Ctrl-C the grader asks its pool processes to stop (SIGTERM) and waits ANSWER_S for them
# before it answers; one that is grading unwinds (its sandbox workers are closed and their folders
# removed) on its own, and ends itself (SIGALRM) if that takes more than STOP_GRACE_S. Its sandbox
# processes die with it in any case (their parent-death signal).
STOP_GRACE_S = 30
ANSWER_S = 1.0


class GradingStopped(BaseException):
    """Raised in a pool process by SIGTERM: a BaseException, so no grading code treats it as a result."""


_grading_now = False  # in a pool process: a submission is being graded (else SIGTERM just exits)


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    if not _grading_now:
        os._exit(0)  # idle: nothing to close
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one must not cut the unwinding short
    signal.alarm(STOP_GRACE_S)  # bounded though nobody waits, and though a finalizer swallows the exception
    raise GradingStopped


def _pool_process_setup() -> None:
    """Runs first in each pool process: Ctrl-C is the grader's to handle, SIGTERM stops the grading.
    SIGINT was blocked from its birth (`_submit`): one sent during its start-up is dropped here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGTERM, _stop_on_sigterm)


def _grade_in_pool(
    grade_function: GradeFunction, submission: Submission, config: GraderConfig, parts: list[str] | None
) -> SubmissionResult:
    """`grade_one` in a pool process; stopped, the process exits once the grading has unwound."""
    global _grading_now
    _grading_now = True
    try:
        return grade_one(grade_function, submission, config, parts)
    except GradingStopped:
        os._exit(0)  # the `with Worker(...)` blocks have closed their sandboxes on the way here
    finally:
        _grading_now = False


def stop_pool(pool: ProcessPoolExecutor, wait_s: float = ANSWER_S) -> None:
    """Stop a pool's processes now (gradings in flight are abandoned, their sandboxes closed).

    The pool is not waited for beyond `wait_s` (nor by `shutdown`, which would join every process):
    a process still unwinding then finishes on its own, within its STOP_GRACE_S alarm.

    Args:
        pool: the pool (its queued work is cancelled).
        wait_s: how long to wait for the processes to exit.
    """
    try:  # a second Ctrl-C must not cut this short (signals can only be set from the main thread)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        previous = None
    try:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for process in processes:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + wait_s
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        pool.shutdown(wait=False, cancel_futures=True)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _stopped_on_interrupt(pool: ProcessPoolExecutor) -> Iterator[ProcessPoolExecutor]:
    """The pool, shut down when the block ends; Ctrl-C stops it (`stop_pool`) without the wait
    for every process that `with pool:` would add."""
    stopped = False
    try:
        yield pool
    except KeyboardInterrupt:
        stopped = True
        stop_pool(pool)
        raise
    finally:
        if not stopped:
            pool.shutdown(wait=True)


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
        self.grade_function, self.config, self.parts = grade_function, config, parts
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
            result = grader_error_result(label, self.config, self.parts, error)
        self.on_result(index, result)
        return True

    def _submit(self, pool: ProcessPoolExecutor, index: int) -> Future[SubmissionResult]:
        # A process spawned here inherits SIGINT blocked: a Ctrl-C during its start-up is not a
        # traceback of its own; here it is held until the submit returns.
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return pool.submit(_grade_in_pool, self.grade_function, self.submissions[index], self.config, self.parts)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def _drain(self, futures: dict[Future[SubmissionResult], int], suspects: list[int]) -> bool:
        """Hand on the finished futures' results; those whose worker process died become suspects
        (after the pool broke, what was still running died with it). Returns: whether none died."""
        died = [index for future, index in futures.items() if not self._record(index, future)]
        suspects.extend(died)
        return not died

    def _pool(self, jobs: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(jobs, mp_context=self.context, initializer=_pool_process_setup)

    def _fill_and_wait(self, pool: ProcessPoolExecutor, pending: deque[int], suspects: list[int]) -> None:
        """Keep `jobs` gradings in flight until none is pending, or until the pool breaks."""
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
            if not self._drain({future: in_flight.pop(future) for future in done}, suspects):
                self._drain(in_flight, suspects)
                return

    def _grade_alone(self, index: int) -> SubmissionResult:
        with _stopped_on_interrupt(self._pool(1)) as pool:
            future = self._submit(pool, index)
            try:
                return future.result()
            except BrokenProcessPool:
                reason = "the grading process died (crash or out of memory)"
            except Exception as error:
                reason = f"{type(error).__name__}: {error}"
        return grader_error_result(self.submissions[index].label, self.config, self.parts, reason)

    def run(self) -> None:
        """Grade everything; submissions whose worker died are regraded alone to find the culprit."""
        pending = deque(range(len(self.submissions)))
        suspects: list[int] = []
        while pending:  # a fresh pool after one broke
            with _stopped_on_interrupt(self._pool(self.jobs)) as pool:
                self._fill_and_wait(pool, pending, suspects)
        for index in sorted(suspects):
            self.on_result(index, self._grade_alone(index))
