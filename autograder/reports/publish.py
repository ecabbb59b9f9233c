"""Publish a batch's reports into its output folder so that each file appears whole."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.config import GraderConfig
from autograder.reports.class_view import write_class_view
from autograder.reports.files import GRADEBOOK_NAME, SUMMARY_NAME, write_reports
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.assignment import Assignment

SCRATCH_PREFIX = ".publishing-"


def remove_scratch(out_dir: Path) -> None:
    """Remove scratch folders that a killed batch left in out_dir (they never hold a finished report).

    Args:
        out_dir: the report folder.
    """
    for scratch in Path(out_dir).glob(f"{SCRATCH_PREFIX}*"):
        shutil.rmtree(scratch, ignore_errors=True)


def publish_reports(
    results: Sequence[SubmissionResult],
    stems: Sequence[str],
    config: GraderConfig,
    assignment: Assignment,
    out_dir: Path,
    html: bool = False,
    reporter: bool = False,
    batch_files: bool = True,
    missing: Sequence[str] = (),
) -> None:
    """Write the reports of `write_reports` so that each file appears whole:
    rendered in a scratch folder inside out_dir, then moved into place with os.replace.

    Args:
        results: the results to report.
        stems: their unique file stems.
        config: the validated configuration.
        assignment: the graded assignment (its catalogue, report sections).
        out_dir: the report folder.
        html: also the HTML feedback pages.
        reporter: also the reporter payloads.
        batch_files: also gradebook.csv, summary.md and the class view (False: the per-submission
            files only).
        missing: labels of the batch's submissions without a current result (the class view counts them).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=out_dir, prefix=SCRATCH_PREFIX))
    try:
        write_reports(results, stems, config, assignment, scratch, html, reporter)
        if batch_files:  # the class page links each student's report: the HTML page when written
            links = [f"{stem}{'.html' if html else '.md'}" for stem in stems]
            write_class_view(results, config, assignment, scratch, missing, links)
        for path in sorted(scratch.iterdir()):
            if batch_files or path.name not in (GRADEBOOK_NAME, SUMMARY_NAME):
                os.replace(path, out_dir / path.name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
