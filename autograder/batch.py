"""Batch grading: expand paths into submissions, grade them on an executor, lose none."""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.config import GraderConfig
from autograder.grading import GradeFunction, Submission
from autograder.i18n import t, use_language
from autograder.late import apply_late_policy
from autograder.progress import BatchProgress
from autograder.reports.common import write_csv
from autograder.reports.files import RESERVED_STEMS, publish_reports, remove_scratch
from autograder.reports.regrade import REGRADE_NAME, PointsChange, diff_results, render_regrade_csv
from autograder.results import SubmissionResult
from autograder.results_store import ResultsStore, StoredResult, inputs_digest, sidecar_files
from autograder.submission_snapshot import SnapshotFolder
from autograder.submission_times import submission_times

if TYPE_CHECKING:
    from autograder.assignment import Assignment
    from autograder.executors import Executor, ResultCallback

SUBMISSION_SUFFIXES = (".ipynb", ".py")
# A stem's bytes: the longest file made of it, the store's `.<stem>-N.results.json.XXXXXXXX.tmp`
# while it is written, stays far below the 255 bytes a file name may have.
STEM_BYTES = 120


class SubmissionPathError(ValueError):
    """A PATH argument names no file or folder, or a folder holds no submission."""


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a batch: the results finished before it are stored; nothing runs any more."""

    def __init__(self, stored: int) -> None:
        """Args: stored, the batch's submissions with a current stored result (earlier runs' included)."""
        super().__init__(stored)
        self.stored = stored


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
    chosen = [
        alt if counts[key] > 1 or key in reserved_folded else name
        for name, key, alt in zip(preferred, folded, fallback, strict=True)
    ]
    taken = set(reserved_folded)
    unique = []
    for name in chosen:
        candidate, number = name, 2
        while candidate.casefold() in taken:
            candidate, number = f"{name}-{number}", number + 1
        taken.add(candidate.casefold())
        unique.append(candidate)
    return unique


def readable_name(text: str) -> str:
    """A file name as a person reads it and as UTF-8 (JSON, reports) can hold it.

    Args:
        text: a name from the file system (bytes that are not UTF-8 arrive as lone surrogates).

    Returns:
        The name with such bytes decoded as CP949 where they are (zip files made on Korean Windows)
        and shown as U+FFFD where not; Hangul composed (macOS writes it decomposed); control
        characters shown as U+FFFD.
    """
    try:
        raw = text.encode("utf-8", "surrogateescape")  # the file system's own bytes
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        raw = text.encode("utf-8", "replace")
    for encoding in ("utf-8", "cp949"):
        with contextlib.suppress(UnicodeDecodeError):
            text = raw.decode(encoding)
            break
    else:
        text = raw.decode("utf-8", "replace")
    return "".join(c if c.isprintable() else "\ufffd" for c in unicodedata.normalize("NFC", text))


def _safe_stem(text: str) -> str:
    """A file-name stem of letters (Hangul too), digits, `_` and `-`, without dots: every report
    file is `<stem>.<kind>` and the kinds start with a dot (`.json`, `.results.json`, `.md`,
    `.feedback.md`, `.html`, `.reporter.json`), so distinct stems can never produce the same file
    name (`alice.results` would otherwise write `alice.results.json`, alice's Gradescope file). No
    leading dash (a file name read as an option), and at most STEM_BYTES bytes of UTF-8."""
    stem = re.sub(r"[^\w-]+", "_", text.replace("/", "__")).strip("_-")
    return stem.encode()[:STEM_BYTES].decode("utf-8", "ignore").rstrip("_-") or "submission"


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
    found: list[tuple[Path, str, str]] = []  # (path, label, path as given)
    for given in map(Path, paths):
        if given.is_dir():
            files = _folder_files(given, recursive)
            if not files:
                kinds = " or ".join(f"*{suffix}" for suffix in SUBMISSION_SUFFIXES)
                hint = "" if recursive else t("console.use_recursive")
                raise SubmissionPathError(t("console.empty_folder", path=given, kinds=kinds, hint=hint))
            found.extend((path, readable_name(label), readable_name(path.as_posix())) for path, label in files)
        elif given.is_file():
            found.append((given, readable_name(given.name), readable_name(given.as_posix())))
        else:
            raise SubmissionPathError(t("console.no_such_path", path=given))
    firsts: dict[Path, tuple[Path, str, str]] = {}
    for entry in found:
        firsts.setdefault(entry[0].resolve(), entry)
    unique_found = list(firsts.values())
    labels = _unique([label for _, label, _ in unique_found], [g for _, _, g in unique_found])
    stems = _unique(
        [_safe_stem(str(Path(label).with_suffix(""))) for label in labels],
        [_safe_stem(label) for label in labels],
        RESERVED_STEMS,
    )
    return [
        Submission(path, label, stem) for (path, _, _), label, stem in zip(unique_found, labels, stems, strict=True)
    ]


def grade_all(
    submissions: Sequence[Submission],
    config: GraderConfig,
    grade_function: GradeFunction,
    parts: list[str] | None = None,
    jobs: int = 1,
    progress: bool = False,
    executor: Executor | None = None,
    on_result: ResultCallback | None = None,
) -> list[SubmissionResult]:
    """Grade submissions on an executor (default: the local one, `jobs` worker processes).

    Every submission gets a result: an exception (or a dying worker process) becomes a
    "grader-error" result (see `grader_error_result`). Each result's `submission` is set to the
    submission's label and `grading_seconds` to the wall time of its grading.

    Args:
        submissions: from `expand_paths`.
        config: the validated configuration, passed to the grade function.
        grade_function: `grade_submission(path, config, parts)` (the engine's, bound to the
            assignment and passed by the front end). With jobs > 1 or another executor it must be
            picklable (a module-level function, or a `functools.partial` of one).
        parts: the parts to grade (None: all).
        jobs: the number of parallel worker processes of the default local executor (one job
            grades in this process).
        progress: show the batch's progress on stderr (autograder.progress.BatchProgress).
        executor: where to grade (see `autograder.executors`); None: `LocalExecutor(jobs)`.
        on_result: called in this process as each submission finishes, `(index, result)`, e.g.
            to store it at once.

    Returns:
        One result per submission, in input order.
    """
    if executor is None:
        from autograder.executors.local import LocalExecutor  # process pools: imported when used

        executor = LocalExecutor(jobs)
    results: dict[int, SubmissionResult] = {}
    with BatchProgress(len(submissions), progress, config.feedback.language, jobs=jobs) as bar:

        def finished(index: int, result: SubmissionResult) -> None:
            results[index] = result
            if on_result is not None:
                on_result(index, result)
            bar.finished(submissions[index].label, result.grading_seconds)

        executor.run(list(submissions), config, parts, grade_function, finished)
    missing = [s.label for i, s in enumerate(submissions) if i not in results]
    if missing:  # an executor bug: say so rather than return a short list
        raise RuntimeError(f"the executor returned no result for {', '.join(missing)}")
    return [results[index] for index in range(len(submissions))]


@dataclass
class BatchRun:
    """What `grade_batch` did: every result in input order, and which were graded now."""

    results: list[SubmissionResult]
    graded: list[str]  # labels graded in this run
    reused: list[str]  # labels whose stored result was still current
    # Labels whose earlier stored result this run replaced (archived for the regrade diff), and
    # the diff against them (autograder.reports.regrade); empty when nothing was regraded.
    regraded: list[str] = field(default_factory=list)
    changes: list[PointsChange] = field(default_factory=list)


def grade_batch(
    submissions: Sequence[Submission],
    config: GraderConfig,
    parts: list[str] | None,
    out_dir: Path,
    grade_function: GradeFunction,
    assignment: Assignment,
    executor: Executor | None = None,
    regrade: bool = False,
    progress: bool = False,
    html: bool = False,
    reporter: bool = False,
) -> BatchRun:
    """Grade a batch resumably into out_dir: each finished submission is stored (and its reports
    written) at once; a submission whose stored result matches its content and the grading inputs
    is not graded again; the batch reports are rebuilt from the store at the end.

    Args:
        submissions: from `expand_paths`.
        config: the validated configuration.
        parts: the selected parts (None: all).
        out_dir: the report folder (the store is its `.grading` subfolder).
        grade_function: the engine's `grade_submission`, passed by the front end.
        assignment: the assignment `config` names, loaded once by the front end (its side files,
            catalogue and report sections).
        executor: where to grade (None: the local executor with grading.jobs).
        regrade: grade everything again, whatever is stored.
        progress: show a progress bar.
        html: also write the HTML feedback.
        reporter: also write the reporter payloads.

    Returns:
        The results and what was graded or reused.

    Raises:
        BatchInterrupted: Ctrl-C (KeyboardInterrupt) during the grading; the results stored so
            far stay stored, the executor has stopped its processes.
    """
    with SnapshotFolder() as snapshots:
        # Each file is read once: the digest that decides reuse is of the bytes that are graded.
        sides = [sidecar_files(s.path, config, parts, assignment.sidecar_names) for s in submissions]
        taken = [snapshots.take(s.path, found) for s, found in zip(submissions, sides, strict=True)]
        # A copy's side files lie beside it under their own names.
        copies = [
            Submission(t.path, s.label, s.stem, tuple(t.path.parent / side.name for side in found))
            for t, s, found in zip(taken, submissions, sides, strict=True)
        ]
        digests = [t.sha256 for t in taken]
        times = submission_times({s.stem: s.path for s in submissions}, config.late)  # TimesError before grading
        store = ResultsStore(out_dir)
        remove_scratch(out_dir)  # left by a batch killed while it wrote a report
        inputs = inputs_digest(config, parts, assignment.worker_paths)
        executor_kind = getattr(executor, "name", type(executor).__name__) if executor is not None else "local"
        store.start_batch(
            config,
            parts,
            inputs,
            [{"stem": s.stem, "label": s.label, "source": readable_name(s.path.as_posix())} for s in submissions],
        )
        results: dict[int, SubmissionResult] = {}
        stored: dict[int, StoredResult] = {}
        for index, submission in enumerate(submissions):
            record = store.load(submission.stem)
            if record is None:
                continue
            stored[index] = record
            if not regrade and record.is_current(digests[index], inputs, executor_kind):
                record.result.submission = submission.label
                # The late policy is not part of the inputs digest: a changed deadline re-assesses
                # lateness here, without grading again.
                if apply_late_policy(record.result, times[submission.stem], config.late):
                    store.save(record)
                results[index] = record.result
        todo = [index for index in range(len(submissions)) if index not in results]
        # A result graded under other inputs (or --regrade) is kept for the regrade diff; a student's
        # new file under the same inputs is a new submission, not a regrade.
        regraded = [i for i in todo if i in stored and (regrade or stored[i].inputs_sha256 != inputs)]
        for index in regraded:
            store.archive(submissions[index].stem)

        def store_result(position: int, result: SubmissionResult) -> None:
            index = todo[position]
            submission = submissions[index]
            apply_late_policy(result, times[submission.stem], config.late)
            store.save(
                StoredResult(
                    submission.stem,
                    submission.label,
                    readable_name(submission.path.as_posix()),
                    digests[index],
                    inputs,
                    result,
                    executor_kind,
                )
            )
            publish_reports([result], [submission.stem], config, assignment, out_dir, html, reporter, batch_files=False)
            results[index] = result

        if todo:
            try:
                grade_all(
                    [copies[index] for index in todo],
                    config,
                    grade_function,
                    parts,
                    jobs=config.grading.jobs,
                    progress=progress,
                    executor=executor,
                    on_result=store_result,
                )
            except KeyboardInterrupt:  # every finished result is already stored; the rerun grades the rest
                # Counted in the store: Ctrl-C may come between a result's storing and its reports.
                kept = [store.load(s.stem) for s in submissions]
                current = sum(
                    1 for i, r in enumerate(kept) if r is not None and r.is_current(digests[i], inputs, executor_kind)
                )
                raise BatchInterrupted(current) from None
        ordered = [results[index] for index in range(len(submissions))]
        everything, stems = with_rest_of_store(store, ordered, [s.stem for s in submissions])
        publish_reports(everything, stems, config, assignment, out_dir, html, reporter)
        changes = []
        if regraded:
            old = {submissions[i].label: stored[i].result for i in regraded}
            changes = diff_results(old, {submissions[i].label: results[i] for i in regraded})
            with use_language(config.feedback.language, assignment.messages_dir):
                write_csv(out_dir / REGRADE_NAME, render_regrade_csv(changes))
        return BatchRun(
            ordered,
            [submissions[i].label for i in todo],
            [s.label for i, s in enumerate(submissions) if i not in todo],
            [submissions[i].label for i in regraded],
            changes,
        )


def load_stored_batch(out_dir: Path) -> tuple[GraderConfig, list[SubmissionResult], list[str], list[str]]:
    """The last batch graded into out_dir, read back from its store.

    Args:
        out_dir: a report folder written by `grade_batch`.

    Returns:
        (its configuration, the current results in batch order, their stems, labels of the batch
        without a current stored result).

    Raises:
        FileNotFoundError: out_dir holds no stored batch.
    """
    config = stored_config(out_dir)
    store = ResultsStore(out_dir)
    batch = store.batch()
    results, stems, missing = [], [], []
    for entry in batch["submissions"]:
        record = store.load(entry["stem"])
        # A record graded under other inputs (an earlier grader.yml or engine) is not this batch's.
        if record is None or record.inputs_sha256 != batch["inputs_sha256"]:
            missing.append(entry["label"])
            continue
        record.result.submission = entry["label"]
        results.append(record.result)
        stems.append(entry["stem"])
    return config, results, stems, missing


def with_rest_of_store(
    store: ResultsStore, results: list[SubmissionResult], stems: list[str]
) -> tuple[list[SubmissionResult], list[str]]:
    """A batch's results followed by every other result stored in the same folder.

    The gradebook and summary cover the whole report folder: grading one late notebook into the
    same `--out` adds its row and keeps the earlier ones (their reports and records are there).

    Args:
        store: the report folder's store, whose last batch `results` are of.
        results: the batch's results with a current record, in batch order.
        stems: their stems.

    Returns:
        (results, stems): the batch's first, then the other stored ones sorted by stem (the batch's
        submissions without a current record stay out).
    """
    batch_stems = {entry["stem"] for entry in store.batch()["submissions"]}
    everything, all_stems = list(results), list(stems)
    for stem in store.stems():
        if stem in batch_stems:
            continue
        record = store.load(stem)
        if record is None:  # unreadable: it would be graded again, so it has no row
            continue
        record.result.submission = record.label
        everything.append(record.result)
        all_stems.append(stem)
    return everything, all_stems


def stored_config(out_dir: Path) -> GraderConfig:
    """The configuration of the last batch graded into out_dir (what a front end loads its assignment from).

    Args:
        out_dir: a report folder written by `grade_batch`.

    Returns:
        The configuration, validated again.

    Raises:
        FileNotFoundError: out_dir holds no stored batch.
    """
    store = ResultsStore(out_dir)
    if not (store.folder / "batch.json").is_file():
        raise FileNotFoundError(t("console.no_stored_grading", path=out_dir))
    return store.config()


def rebuild_reports(
    out_dir: Path, assignment: Assignment, html: bool = False, reporter: bool = False
) -> tuple[int, list[str]]:
    """Rebuild the reports of the last batch graded into out_dir from its stored results.

    Args:
        out_dir: a report folder written by `grade_batch`.
        assignment: the assignment its stored configuration names (`stored_config`), loaded by the front end.
        html: also write the HTML feedback.
        reporter: also write the reporter payloads.

    Returns:
        (number of submissions reported, labels of the batch without a current stored result).

    Raises:
        FileNotFoundError: out_dir holds no stored batch.
    """
    config, results, stems, missing = load_stored_batch(out_dir)
    everything, all_stems = with_rest_of_store(ResultsStore(out_dir), results, stems)
    publish_reports(everything, all_stems, config, assignment, out_dir, html, reporter, missing=missing)
    return len(results), missing
