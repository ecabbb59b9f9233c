"""Resumable results: one record per graded submission under OUT_DIR/.grading, written atomically."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.assignment_folder import shipped_files
from autograder.config import PROJECT_ROOT, GraderConfig, validate
from autograder.reports.submission_json import dumps_stable
from autograder.results import STATUS_ERROR, SubmissionResult
from autograder.sidecar_files import locate_sidecar

if TYPE_CHECKING:
    from autograder.assignment import SidecarHook

STORE_DIR = ".grading"  # inside the report folder
PREVIOUS_DIR = "previous"  # in the store: each record as it was before a regrade replaced it
RECORD_FORMAT = 1
# The engine's own files: the assignments (hidden checks, probes, trusted solutions) live in
# assignments/; with them, the folders an assignment makes importable in the worker
# (`Assignment.worker_paths`). A change to any of them is a new engine version.
ENGINE_PACKAGES = ("autograder", "assignments")
# grader.yml keys that do not change how a submission is graded (left out of the inputs digest):
# how a batch runs (its folder, jobs, progress display), and the late section, which is applied to
# every result of a batch, stored or new (autograder.late), so a changed deadline re-assesses
# lateness without grading anything again.
RUN_ONLY_KEYS: dict[str, Any] = {"grading": {"out_dir", "jobs", "progress"}, "late": True}


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that a reader (or a rerun after a crash) sees the old or the new text, never part.

    Args:
        path: the destination; its folder must exist.
        text: the content, written as UTF-8.
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@lru_cache(maxsize=4)
def engine_digest(worker_paths: tuple[Path, ...] = ()) -> str:
    """SHA-256 of every file of the engine's packages (code, hidden checks, reference, schemas)
    and of the folders the graded assignment makes importable in the worker.

    Args:
        worker_paths: `Assignment.worker_paths` (folders inside the project).

    Returns:
        The hex digest (computed once per process and set of folders).
    """
    folders = {PROJECT_ROOT / package for package in ENGINE_PACKAGES} | {Path(path) for path in worker_paths}
    files: set[tuple[str, Path]] = set()  # a set: a worker folder inside an engine package counts once
    for folder in folders:
        # each file by its place under the project (a folder outside it: under the folder's name)
        base = PROJECT_ROOT if folder.is_relative_to(PROJECT_ROOT) else folder.parent
        files.update((path.relative_to(base).as_posix(), path) for path in shipped_files(folder))
    digest = hashlib.sha256()
    for relative, path in sorted(files):
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def inputs_digest(config: GraderConfig, parts: Sequence[str] | None, worker_paths: Sequence[Path] = ()) -> str:
    """SHA-256 naming everything besides the submission that decides its grade: the validated
    grader.yml content (defaults and flag overrides included, run-only keys excluded), the
    selected parts and the engine digest.

    Args:
        config: the validated configuration.
        parts: the selected parts (None: all).
        worker_paths: the graded assignment's `worker_paths` (part of the engine's version).

    Returns:
        The hex digest.
    """
    trimmed = config.model_dump(mode="json", exclude=RUN_ONLY_KEYS)
    engine = engine_digest(tuple(worker_paths))
    described = {"config": trimmed, "parts": None if parts is None else sorted(parts), "engine": engine}
    return hashlib.sha256(dumps_stable(described).encode()).hexdigest()


def sidecar_files(
    path: Path, config: GraderConfig, parts: Sequence[str] | None, hook: SidecarHook | None
) -> list[Path]:
    """Files beside the submission that its grading reads: the one the assignment's training part
    reads when it is graded (`Assignment.sidecar_names` gives the candidates), links included (the
    engine refuses them).

    Args:
        path: the submission file.
        config: the validated configuration.
        parts: the selected parts (None: all).
        hook: the graded assignment's `sidecar_names` (None: it reads no side file).

    Returns:
        The existing candidate files, in the order the assignment gives.
    """
    part = config.training_part()
    if part is None or hook is None or part in config.disabled_parts() or (parts is not None and part not in parts):
        return []
    # The engine's own choice (autograder.sidecar_files.locate_sidecar): the first candidate that exists,
    # a name without `{stem}` only when no other submission shares the folder. Every executor
    # ships and hashes exactly this, so a side file shared by the folder belongs to nobody on any of them.
    found = locate_sidecar(path, hook(config, "{stem}"))
    return [found[0]] if found is not None else []


@dataclass
class StoredResult:
    """One record of the store: the result and the digests it was graded under."""

    stem: str
    label: str
    source: str
    submission_sha256: str
    inputs_sha256: str
    result: SubmissionResult
    executor: str = "local"  # the executor kind that graded it ("local", "ray")

    def is_current(self, submission_sha256: str, inputs_sha256: str, executor: str = "local") -> bool:
        """True when the record answers for this content under these inputs on this kind of
        executor; a grader error never does (it is graded again). A grade from another executor
        is graded again: its nodes may run another copy of the code and data than this machine
        (docs/BATCH.md, Resuming)."""
        return (
            self.submission_sha256 == submission_sha256
            and self.inputs_sha256 == inputs_sha256
            and self.executor == executor
            and self.result.status != STATUS_ERROR
        )


class ResultsStore:
    """OUT_DIR/.grading: `results/<stem>.json` per submission, the batch's manifest and config."""

    def __init__(self, out_dir: Path) -> None:
        """Args: out_dir, the report folder (the store lives in its `.grading` subfolder)."""
        self.out_dir = Path(out_dir)
        self.folder = self.out_dir / STORE_DIR
        self.results = self.folder / "results"

    def start_batch(
        self, config: GraderConfig, parts: Sequence[str] | None, inputs_sha256: str, entries: Sequence[dict[str, str]]
    ) -> None:
        """Record the configuration and the batch (its inputs digest; stems, labels, sources in
        order) of this run, for `autograder report`.

        Args:
            config: the validated configuration the batch grades with.
            parts: the selected parts (None: all).
            inputs_sha256: `inputs_digest(config, parts)`.
            entries: one {"stem", "label", "source"} per submission.
        """
        self.results.mkdir(parents=True, exist_ok=True)
        # Key order kept (not dumps_stable): the parts' order in grader.yml is the reports' order.
        atomic_write_text(
            self.folder / "config.json", json.dumps(config.model_dump(mode="json"), indent=2, ensure_ascii=False)
        )
        batch = {
            "parts": None if parts is None else list(parts),
            "inputs_sha256": inputs_sha256,
            "submissions": list(entries),
        }
        atomic_write_text(self.folder / "batch.json", dumps_stable(batch))

    def config(self) -> GraderConfig:
        """The configuration of the last batch started here (validated again: ConfigError if it no
        longer is)."""
        return validate(json.loads((self.folder / "config.json").read_text(encoding="utf-8")))

    def batch(self) -> dict[str, Any]:
        """The last batch started here: {"parts", "inputs_sha256", "submissions": [{stem, label, source}]}."""
        batch: dict[str, Any] = json.loads((self.folder / "batch.json").read_text(encoding="utf-8"))
        return batch

    def load(self, stem: str) -> StoredResult | None:
        """The stored record of `stem`, or None (none, or unreadable: it is graded again)."""
        try:
            data = json.loads((self.results / f"{stem}.json").read_text(encoding="utf-8"))
            if data.get("format") != RECORD_FORMAT:
                return None
            return StoredResult(
                **{key: data[key] for key in ("stem", "label", "source", "submission_sha256", "inputs_sha256")},
                result=SubmissionResult.from_json(data["result"]),
                executor=str(data.get("executor", "")),  # a record from before executors were recorded: regraded
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def archive(self, stem: str) -> None:
        """Keep the stored record of `stem` under `previous/` before a regrade replaces it (the
        regrade diff compares against it); an earlier archived copy is replaced.

        Args:
            stem: the submission's stem (one without a record has nothing to keep).
        """
        source = self.results / f"{stem}.json"
        if source.is_file():
            previous = self.folder / PREVIOUS_DIR
            previous.mkdir(parents=True, exist_ok=True)
            atomic_write_text(previous / source.name, source.read_text(encoding="utf-8"))

    def stems(self) -> list[str]:
        """Every stem with a stored record, sorted."""
        return sorted(path.stem for path in self.results.glob("*.json")) if self.results.is_dir() else []

    def save(self, record: StoredResult) -> None:
        """Store a record atomically and log the event (`events.log`, one line per stored grading).

        Args:
            record: the finished grading.
        """
        self.results.mkdir(parents=True, exist_ok=True)
        # vars: the fields as they are (asdict would also convert the result, which to_json writes with its totals)
        data = {**vars(record), "format": RECORD_FORMAT, "stored_at": time.time(), "result": record.result.to_json()}
        atomic_write_text(self.results / f"{record.stem}.json", dumps_stable(data))
        event = {"event": "stored", "stem": record.stem, "status": record.result.status, "points": record.result.points}
        with open(self.folder / "events.log", "a", encoding="utf-8") as log:  # O_APPEND: one write
            log.write(json.dumps(event) + "\n")
