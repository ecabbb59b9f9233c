"""A stand-in `autograder.engine` that logs every grading it starts (to count gradings across runs).

Set GRADING_COUNT_FILE to the log's path. GRADING_ENGINE=real grades with the real engine; anything
else gives a fake, content-dependent result after GRADING_FAKE_SECONDS (default 0.4) of sleep;
stopped during that sleep, it sleeps GRADING_FAKE_UNWIND_SECONDS (default 0) before it unwinds.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from autograder.assignment import Assignment
from autograder.config import GraderConfig
from autograder.results import STATUS_GRADED, CheckResult, PartResult, SubmissionResult


def _log_start(path: Path) -> None:
    with open(os.environ["GRADING_COUNT_FILE"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {Path(path).name}\n")  # one short O_APPEND write per grading


def _fake(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    try:
        time.sleep(float(os.environ.get("GRADING_FAKE_SECONDS", "0.4")))
    except BaseException:  # stopped: a slow unwinding, as closing sandboxes on a loaded machine can be
        time.sleep(float(os.environ.get("GRADING_FAKE_UNWIND_SECONDS", "0")))
        raise
    digest = hashlib.sha256(Path(path).read_bytes()).digest()
    results = []
    for index, (name, part) in enumerate(config.parts.items()):
        skipped = parts is not None and name not in parts
        passed = bool(digest[index] & 1)  # the content decides which parts pass
        checks = [
            CheckResult(
                check, name, points, passed and not skipped, points if passed and not skipped else 0, skipped=skipped
            )
            for check, points in part.checks.items()
        ]
        results.append(PartResult(name, part.title, part.points, sum(c.points for c in checks), checks))
    return SubmissionResult(Path(path).name, STATUS_GRADED, results)


def grade_submission(
    path: Path, config: GraderConfig, parts: list[str] | None = None, *, assignment: Assignment
) -> SubmissionResult:
    """Log the start, then grade (really or fakely, see the module docstring)."""
    _log_start(path)
    if os.environ.get("GRADING_ENGINE") == "real":
        from autograder.engine import grade_submission as real

        return real(path, config, parts, assignment=assignment)
    return _fake(path, config, parts)
