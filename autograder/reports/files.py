"""Write every report of a batch into the output folder, each file appearing whole."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.i18n import assignment_title, use_language
from autograder.reports.class_view import write_class_view
from autograder.reports.common import PartColumn, graded_possible, part_columns, write_csv
from autograder.reports.gradebook import render_gradebook
from autograder.reports.gradescope import gradescope_results
from autograder.reports.html import render_html
from autograder.reports.markdown import render_markdown, render_submission
from autograder.reports.reporter_payload import encode_payload, part_payloads, reporter_env_name
from autograder.reports.sections import ReportView, extra_sections
from autograder.reports.submission_json import dumps_stable, submission_json
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.assignment import Assignment
    from autograder.config import GraderConfig

GRADEBOOK_NAME = "gradebook.csv"
SUMMARY_NAME = "summary.md"
SCRATCH_PREFIX = ".publishing-"
# Batch-level files are `<name>.<ext>`: no submission's stem may be one of their names.
RESERVED_STEMS = frozenset({"summary", "gradebook", "manifest", "class"})  # class: class.html, class.json


# Every per-submission file is `<stem><kind>`.
SUBMISSION_FILE_KINDS = (".results.json", ".json", ".md", ".html", ".feedback.md", ".reporter.json")


def render_feedback_markdown(
    result: SubmissionResult, columns: Sequence[PartColumn] = (), view: ReportView | None = None
) -> str:
    """The Markdown version of the HTML feedback: the parts table, then the extras' sections.

    Args:
        result: one graded submission.
        columns: the part columns (grader.yml order).
        view: the graded assignment's `report_sections` hook (None: generic sections only).

    Returns:
        Markdown text.
    """
    sections = [render_submission(result, columns), *(s.markdown() for s in extra_sections(result.extras, view))]
    return "\n".join(section for section in sections if section)


def reporter_document(result: SubmissionResult) -> dict[str, Any]:
    """Everything a workflow needs to feed `autograding-grading-reporter` for one submission.

    Args:
        result: one graded submission.

    Returns:
        {"submission", "total", "possible", "runners": "a,b", "payloads": {runner: payload},
        "env": {"<RUNNER>_RESULTS": base64}}.
    """
    payloads = part_payloads(result)
    return {
        "submission": result.submission,
        "total": result.points,
        "possible": graded_possible(result),
        "runners": ",".join(payloads),
        "payloads": payloads,
        "env": {reporter_env_name(runner): encode_payload(p) for runner, p in payloads.items()},
    }


def check_stems(stems: Sequence[str]) -> None:
    """Refuse stems whose report files would overwrite each other or a batch file.

    File names are compared case-insensitively (one file on macOS and Windows).

    Args:
        stems: one stem per submission.

    Raises:
        ValueError: naming the first clash.
    """
    owners: dict[str, str] = {f"{name}.md": name for name in RESERVED_STEMS}
    owners[GRADEBOOK_NAME] = "gradebook"
    for stem in stems:
        if stem.casefold() in RESERVED_STEMS:
            raise ValueError(f"stems must not be any of {sorted(RESERVED_STEMS)}")
        for kind in SUBMISSION_FILE_KINDS:
            name = f"{stem}{kind}".casefold()
            if name in owners:
                raise ValueError(f"report files clash: {stem}{kind} (stems {owners[name]!r} and {stem!r})")
            owners[name] = stem


def write_reports(
    results: Sequence[SubmissionResult],
    stems: Sequence[str],
    config: GraderConfig,
    assignment: Assignment,
    out_dir: Path,
    html: bool = False,
    reporter: bool = False,
) -> list[Path]:
    """Write, per submission, `<stem>.results.json` (Gradescope), `<stem>.json` (the full result)
    and `<stem>.md` (with `html` also the feedback page `<stem>.html` and its Markdown version
    `<stem>.feedback.md`, with `reporter` the reporter payloads `<stem>.reporter.json`); and for the
    batch `gradebook.csv` and `summary.md`.

    Args:
        results: the graded submissions.
        stems: a unique file-name stem per result (same order).
        config: the validated configuration (parts and assignment title).
        assignment: the graded assignment (its message catalogue and report sections).
        out_dir: the output folder; created when missing.
        html: write the HTML feedback pages and their Markdown versions.
        reporter: write the reporter payloads.

    Returns:
        The paths written, in writing order.
    """
    if len(stems) != len(results) or len(set(stems)) != len(stems):
        raise ValueError("write_reports needs one unique stem per result")
    check_stems(stems)
    with use_language(config.feedback.language, assignment.messages_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        config_parts, view = config.parts, assignment.report_sections
        title = assignment_title(config.assignment.title)
        columns = part_columns(config_parts, results)
        written = []
        for result, stem in zip(results, stems, strict=True):
            texts = {
                ".results.json": dumps_stable(gradescope_results(result, config_parts, assignment=title)),
                ".json": submission_json(result),
                ".md": render_submission(result, columns),
            }
            if html:  # what the assignment's extras mean, in its words
                texts[".html"] = render_html(result, config_parts, title, view)
                texts[".feedback.md"] = render_feedback_markdown(result, columns, view)
            if reporter:
                texts[".reporter.json"] = dumps_stable(reporter_document(result))
            for kind, text in texts.items():
                path = out_dir / f"{stem}{kind}"
                path.write_text(text, encoding="utf-8")
                written.append(path)
        gradebook_path = out_dir / GRADEBOOK_NAME
        write_csv(gradebook_path, render_gradebook(results, config_parts))
        summary_path = out_dir / SUMMARY_NAME
        summary_path.write_text(render_markdown(results, config_parts, title), encoding="utf-8")
        return [*written, gradebook_path, summary_path]


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
