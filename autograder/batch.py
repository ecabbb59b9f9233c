"""Batch grading: expand paths into submissions, grade them in parallel processes, lose none."""

from __future__ import annotations

import importlib

import multiprocessing
import re
import sys
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from autograder.config import disabled_parts
from autograder.reports.files import RESERVED_STEMS
from autograder.results import STATUS_ERROR, CheckResult, PartResult, SubmissionResult

SUBMISSION_SUFFIXES = (".ipynb", ".py")
GradeFunction = Callable[[Path, dict[str, Any], "list[str] | None"], SubmissionResult]


class SubmissionPathError(ValueError):
    """A PATH argument names no file or folder, or a folder holds no submission."""


@dataclass(frozen=True)
class Submission:
    """One file to grade, with the unique names its reports use."""

    path: Path
    label: str   # SubmissionResult.submission and the gradebook's `file`: the name, or a path
    stem: str    # file-system-safe stem of `<stem>.json`, `<stem>.results.json`, `<stem>.md`


def _folder_files(folder: Path, recursive: bool) -> list[tuple[Path, str]]:
    candidates = folder.rglob("*") if recursive else folder.glob("*")
    found = []
    for path in candidates:
        relative = path.relative_to(folder)
        hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
        if path.is_file() and path.suffix in SUBMISSION_SUFFIXES and not hidden:
            found.append((path, relative.as_posix()))
    return sorted(found, key=lambda item: item[1])


def _unique(preferred: list[str], fallback: list[str], reserved: frozenset[str] = frozenset()) -> list[str]:
    """One distinct name per entry: the preferred one, else the fallback, numbered when still taken.

    Names compare case-insensitively (`Alice` and `alice` are one file on macOS and Windows).

    Args:
        preferred: the names wanted, one per entry.
        fallback: the name to use where the preferred one is shared or reserved.
        reserved: names no entry may take (compared case-insensitively).

    Returns:
        The chosen names, in entry order.
    """
    folded = [name.casefold() for name in preferred]
    counts = Counter(folded)
    reserved_folded = {name.casefold() for name in reserved}
    chosen = [alt if counts[key] > 1 or key in reserved_folded else name
              for name, key, alt in zip(preferred, folded, fallback)]
    taken = set(reserved_folded)
    unique = []
    for name in chosen:
        candidate, number = name, 2
        while candidate.casefold() in taken:
            candidate, number = f"{name}-{number}", number + 1
        taken.add(candidate.casefold())
        unique.append(candidate)
    return unique


def _safe_stem(text: str) -> str:
    """A file-name stem without dots: every report file is `<stem>.<kind>` and the kinds start with
    a dot (`.json`, `.results.json`, `.md`, `.feedback.md`, `.html`, `.reporter.json`), so distinct
    stems can never produce the same file name (`alice.results` would otherwise write
    `alice.results.json`, alice's Gradescope file)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text.replace("/", "__")).strip("_") or "submission"


def expand_paths(paths: Sequence[str | Path], recursive: bool = False) -> list[Submission]:
    """Turn PATH arguments into submissions: files as given, folders into their .ipynb/.py files.

    Folder contents are sorted by relative path; hidden files and folders are ignored; subfolders
    are searched only when `recursive`. A file given twice is graded once. Labels are the file
    name (or the path inside the folder); when two labels clash, the paths as given are used.

    Args:
        paths: files and folders, in the order given.
        recursive: also search subfolders of folders.

    Returns:
        The submissions in input order, with unique labels and stems.

    Raises:
        SubmissionPathError: a path does not exist, or a folder holds no submission.
    """
    found: list[tuple[Path, str, str]] = []   # (path, label, path as given)
    for given in map(Path, paths):
        if given.is_dir():
            files = _folder_files(given, recursive)
            if not files:
                kinds = " or ".join(f"*{suffix}" for suffix in SUBMISSION_SUFFIXES)
                raise SubmissionPathError(f"{given}: folder holds no {kinds} files"
                                          + ("" if recursive else " (use --recursive for subfolders)"))
            found.extend((path, label, path.as_posix()) for path, label in files)
        elif given.is_file():
            found.append((given, given.name, given.as_posix()))
        else:
            raise SubmissionPathError(f"{given}: no such file or folder")
    seen: set[Path] = set()
    unique_found = []
    for path, label, as_given in found:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique_found.append((path, label, as_given))
    labels = _unique([label for _, label, _ in unique_found], [g for _, _, g in unique_found])
    stems = _unique([_safe_stem(str(Path(label).with_suffix(""))) for label in labels],
                    [_safe_stem(label) for label in labels], RESERVED_STEMS)
    return [Submission(path, label, stem)
            for (path, _, _), label, stem in zip(unique_found, labels, stems)]


def load_grade_function() -> GradeFunction:
    """The engine's `grade_submission` (imported here: it is heavy and written separately).

    Returns:
        `autograder.engine.grade_submission`.

    Raises:
        ImportError: the engine cannot be imported.
    """
    # import_module consults sys.modules, so a stand-in engine registered there is honoured even
    # after the real one was imported (the package attribute would win with `from ... import`).
    engine = importlib.import_module("autograder.engine")
    return engine.grade_submission


def _skip_reason(part: str, config: dict[str, Any], parts: Sequence[str] | None) -> str:
    # Same wording as the engine's skipped checks.
    if parts is not None and part not in parts:
        return "not selected for this grading run"
    return disabled_parts(config).get(part, "")


def grader_error_result(label: str, config: dict[str, Any], parts: Sequence[str] | None,
                        error: BaseException | str, traceback_text: str = "") -> SubmissionResult:
    """The result recorded when grading a submission failed: status "grader-error", zero points
    for every part that was to be graded (other parts skipped), the error in `notes` and the
    traceback in `extras["traceback"]` (for staff; reports do not show it).

    Args:
        label: the submission's label.
        config: the validated configuration.
        parts: the selected parts (None: all).
        error: the exception, or a description of what went wrong.
        traceback_text: the formatted traceback, if any.

    Returns:
        A SubmissionResult with status STATUS_ERROR.
    """
    results = []
    for name, part in config["parts"].items():
        reason = _skip_reason(name, config, parts)
        checks = [CheckResult(check_id, name, points, passed=False, points=0, message=reason,
                              skipped=True)
                  for check_id, points in part["checks"].items()] if reason else []
        results.append(PartResult(name, part["title"], part["points"], 0, checks))
    described = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    note = (f"The autograder failed on this submission ({described}), so it was not graded; "
            "the course staff have the details.")
    extras = {"traceback": traceback_text} if traceback_text else {}
    return SubmissionResult(label, STATUS_ERROR, results, notes=[note], extras=extras)


def _grade_one(grade_function: GradeFunction, submission: Submission, config: dict[str, Any],
               parts: list[str] | None) -> SubmissionResult:
    start = time.perf_counter()
    try:
        result = grade_function(submission.path, config, parts)
        if not isinstance(result, SubmissionResult):
            raise TypeError(f"grade_submission returned {type(result).__name__}, "
                            "not a SubmissionResult")
    except (Exception, SystemExit) as error:  # one failing submission must not stop the batch
        result = grader_error_result(submission.label, config, parts, error,
                                     traceback.format_exc())
    result.submission = submission.label
    result.grading_seconds = time.perf_counter() - start
    return result


class _ParallelGrader:
    """Grades in worker processes, at most `jobs` in flight; survives a dying worker."""

    def __init__(self, grade_function: GradeFunction, submissions: Sequence[Submission],
                 config: dict[str, Any], parts: list[str] | None, jobs: int,
                 on_done: Callable[[], Any]) -> None:
        self.task = (grade_function, config, parts)
        self.submissions, self.jobs, self.on_done = submissions, jobs, on_done
        self.context = multiprocessing.get_context("spawn")   # no fork after torch/threads
        self.results: dict[int, SubmissionResult] = {}

    def _record(self, index: int, future: Future) -> bool:
        """Store a finished future's result; False when its worker process died."""
        try:
            self.results[index] = future.result()
        except BrokenProcessPool:
            return False
        except Exception as error:  # e.g. a result that cannot be pickled back
            label = self.submissions[index].label
            self.results[index] = grader_error_result(label, self.task[1], self.task[2], error)
        self.on_done()
        return True

    def _submit(self, pool: ProcessPoolExecutor, index: int) -> Future:
        grade_function, config, parts = self.task
        return pool.submit(_grade_one, grade_function, self.submissions[index], config, parts)

    def _drain(self, in_flight: dict[Future, int], suspects: list[int]) -> None:
        """After the pool broke: keep what finished; what was still running died with it."""
        for future, index in in_flight.items():
            if not self._record(index, future):
                suspects.append(index)

    def _run_pool(self, pending: deque[int], suspects: list[int]) -> None:
        with ProcessPoolExecutor(self.jobs, mp_context=self.context) as pool:
            in_flight: dict[Future, int] = {}
            while pending or in_flight:
                while pending and len(in_flight) < self.jobs:
                    try:
                        in_flight[self._submit(pool, pending[0])] = pending[0]
                    except BrokenProcessPool:   # a worker died since the last wait
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
        return grader_error_result(self.submissions[index].label, self.task[1], self.task[2],
                                   reason)

    def run(self) -> list[SubmissionResult]:
        """Grade everything; submissions whose worker died are regraded alone to find the culprit.

        Returns:
            The results in submission order.
        """
        pending = deque(range(len(self.submissions)))
        suspects: list[int] = []
        while pending:
            self._run_pool(pending, suspects)
        for index in sorted(suspects):
            self.results[index] = self._grade_alone(index)
            self.on_done()
        return [self.results[index] for index in range(len(self.submissions))]


def grade_all(submissions: Sequence[Submission], config: dict[str, Any],
              parts: list[str] | None = None, jobs: int = 1,
              grade_function: GradeFunction | None = None,
              progress: bool = False) -> list[SubmissionResult]:
    """Grade submissions, in up to `jobs` worker processes (one job grades in this process).

    Every submission gets a result: an exception (or a dying worker process) becomes a
    "grader-error" result (see `grader_error_result`). Each result's `submission` is set to the
    submission's label and `grading_seconds` to the wall time of its grading.

    Args:
        submissions: from `expand_paths`.
        config: the validated configuration, passed to the grade function.
        parts: the parts to grade (None: all).
        jobs: the number of parallel worker processes.
        grade_function: `grade_submission(path, config, parts)`; None loads the engine's. With
            jobs > 1 it must be picklable (a module-level function).
        progress: show a tqdm progress bar on stderr.

    Returns:
        One result per submission, in input order.
    """
    grade_function = grade_function or load_grade_function()
    jobs = max(1, min(jobs, len(submissions)))
    with tqdm(total=len(submissions), file=sys.stderr, disable=not progress, unit="submission",
              desc="Grading", dynamic_ncols=True) as bar:
        if jobs == 1:
            results = []
            for submission in submissions:
                results.append(_grade_one(grade_function, submission, config, parts))
                bar.update()
            return results
        return _ParallelGrader(grade_function, submissions, config, parts, jobs, bar.update).run()
