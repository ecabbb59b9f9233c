"""Write every report of a batch into the output folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.i18n import assignment_title, use_language
from autograder.reports.common import part_columns
from autograder.reports.gradebook import write_gradebook
from autograder.reports.gradescope import write_gradescope_results
from autograder.reports.markdown import render_markdown, render_submission
from autograder.reports.submission_json import write_submission_json
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.assignment import Assignment
    from autograder.config import GraderConfig

GRADEBOOK_NAME = "gradebook.csv"
SUMMARY_NAME = "summary.md"
# Batch-level files are `<name>.<ext>`: no submission's stem may be one of their names.
RESERVED_STEMS = frozenset({"summary", "gradebook", "manifest", "class"})  # class: class.html, class.json


# Every per-submission file is `<stem><kind>` (here and in reports.feedback.write_feedback).
SUBMISSION_FILE_KINDS = (".results.json", ".json", ".md", ".html", ".feedback.md", ".reporter.json")


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
) -> list[Path]:
    """Write, per submission, `<stem>.results.json` (Gradescope), `<stem>.json` (the full result)
    and `<stem>.md`; and for the batch `gradebook.csv` and `summary.md`.

    Args:
        results: the graded submissions.
        stems: a unique file-name stem per result (same order).
        config: the validated configuration (parts and assignment title).
        assignment: the graded assignment (its message catalogue).
        out_dir: the output folder; created when missing.

    Returns:
        The paths written, in writing order.
    """
    if len(stems) != len(results) or len(set(stems)) != len(stems):
        raise ValueError("write_reports needs one unique stem per result")
    check_stems(stems)
    with use_language(config.feedback.language, assignment.messages_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        config_parts = config.parts
        title = assignment_title(config.assignment.title)
        columns = part_columns(config_parts, results)
        written = []
        for result, stem in zip(results, stems, strict=True):
            gradescope_path = out_dir / f"{stem}.results.json"
            write_gradescope_results(result, gradescope_path, config_parts, title)
            json_path = out_dir / f"{stem}.json"
            write_submission_json(result, json_path)
            markdown_path = out_dir / f"{stem}.md"
            markdown_path.write_text(render_submission(result, columns), encoding="utf-8")
            written.extend([gradescope_path, json_path, markdown_path])
        gradebook_path = out_dir / GRADEBOOK_NAME
        write_gradebook(results, gradebook_path, config_parts)
        summary_path = out_dir / SUMMARY_NAME
        summary_path.write_text(render_markdown(results, config_parts, title), encoding="utf-8")
        return [*written, gradebook_path, summary_path]
