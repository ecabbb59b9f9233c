"""Write every report of a batch into the output folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autograder.reports.common import part_columns
from autograder.reports.gradebook import write_gradebook
from autograder.reports.gradescope import write_gradescope_results
from autograder.reports.markdown import render_markdown, render_submission
from autograder.reports.submission_json import write_submission_json
from autograder.results import SubmissionResult

GRADEBOOK_NAME = "gradebook.csv"
SUMMARY_NAME = "summary.md"
RESERVED_STEMS = frozenset({"summary"})   # `<stem>.md` must not overwrite the batch summary


def write_reports(results: Sequence[SubmissionResult], stems: Sequence[str],
                  config: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write, per submission, `<stem>.results.json` (Gradescope), `<stem>.json` (the full result)
    and `<stem>.md`; and for the batch `gradebook.csv` and `summary.md`.

    Args:
        results: the graded submissions.
        stems: a unique file-name stem per result (same order).
        config: the validated configuration (parts and assignment name).
        out_dir: the output folder; created when missing.

    Returns:
        The paths written, in writing order.
    """
    if len(stems) != len(results) or len(set(stems)) != len(stems):
        raise ValueError("write_reports needs one unique stem per result")
    if RESERVED_STEMS & set(stems):
        raise ValueError(f"stems must not be any of {sorted(RESERVED_STEMS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    config_parts = config["parts"]
    assignment = config["assignment"]["name"]
    columns = part_columns(config_parts, results)
    written = []
    for result, stem in zip(results, stems):
        gradescope_path = out_dir / f"{stem}.results.json"
        write_gradescope_results(result, gradescope_path, config_parts, assignment)
        json_path = out_dir / f"{stem}.json"
        write_submission_json(result, json_path)
        markdown_path = out_dir / f"{stem}.md"
        markdown_path.write_text(render_submission(result, columns), encoding="utf-8")
        written.extend([gradescope_path, json_path, markdown_path])
    gradebook_path = out_dir / GRADEBOOK_NAME
    write_gradebook(results, gradebook_path, config_parts)
    summary_path = out_dir / SUMMARY_NAME
    summary_path.write_text(render_markdown(results, config_parts, assignment), encoding="utf-8")
    return [*written, gradebook_path, summary_path]
