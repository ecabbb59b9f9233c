"""Per-submission feedback files: HTML page, Markdown version (job summaries), reporter payloads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autograder.integrations.github import encode_payload, part_payloads, reporter_env_name
from autograder.reports.common import PartColumn, graded_possible, graded_total, part_columns
from autograder.reports.figures import training_series
from autograder.reports.html import write_html
from autograder.reports.markdown import render_submission
from autograder.reports.submission_json import dumps_stable
from autograder.results import SubmissionResult

OPEN, BLOCKED, WRONG_OPEN, WRONG_BLOCKED = "■", "·", "✗", "○"


def mask_markdown(picture: Mapping[str, Any] | None) -> str:
    """The attention-mask picture as text grids (for places that show no images).

    Args:
        picture: `extras["attention_mask"]`, or None.

    Returns:
        Markdown, or "" without a picture.
    """
    if not picture:
        return ""
    lines = ["**What your decoder self-attention can see** (your `create_look_ahead_mask_for_attention` "
             "on two padded sentences)", ""]
    if picture.get("error"):
        return "\n".join([*lines, f"- {picture['error']}", ""])
    lines.extend(f"- {finding}" for finding in picture.get("findings", []))
    legend = (f"{OPEN} may attend, {BLOCKED} blocked, {WRONG_OPEN} open but should be blocked, "
              f"{WRONG_BLOCKED} blocked but should be open; row = query, column = key")
    lines.extend(["", legend, ""])
    for row, (mask, expected, labels) in enumerate(zip(picture["mask"], picture["expected"], picture["labels"])):
        width = max(len(label) for label in labels)
        grid = [f"sentence {row + 1}: {' '.join(labels)}"]
        for query, (mine, right) in enumerate(zip(mask, expected)):
            cells = [(OPEN if a else BLOCKED) if a == b else (WRONG_OPEN if a else WRONG_BLOCKED)
                     for a, b in zip(mine, right)]
            grid.append(f"{labels[query]:>{width}} {' '.join(cells)}")
        lines.extend(["```text", *grid, "```", ""])
    return "\n".join(lines)


def training_markdown(training: Mapping[str, Any] | None, threshold: float | None = None) -> str:
    """One line about the training run's BLEU (or "" when not trained).

    Args:
        training: `extras["training"]`, or None.
        threshold: the BLEU bar.

    Returns:
        Markdown.
    """
    if not training:
        return ""
    series = training_series(training)
    if series["final_bleu"] is None:
        return ""
    bar = series["threshold"] if series["threshold"] is not None else threshold
    method = f" {training['method']}" if isinstance(training.get("method"), str) else ""
    return (f"**Training run:** validation BLEU {series['final_bleu']:.3f}"
            + (f" (bar {bar:g})" if bar is not None else "") + "." + method + "\n")


def render_feedback_markdown(result: SubmissionResult, columns: Sequence[PartColumn] = (),
                             bleu_threshold: float | None = None) -> str:
    """The Markdown version of the HTML feedback: the parts table, then the mask and training.

    Args:
        result: one graded submission.
        columns: the part columns (grader.yml order).
        bleu_threshold: the training part's BLEU bar.

    Returns:
        Markdown text.
    """
    sections = [render_submission(result, columns),
                mask_markdown(result.extras.get("attention_mask")),
                training_markdown(result.extras.get("training"), bleu_threshold)]
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
    return {"submission": result.submission, "total": graded_total(result),
            "possible": graded_possible(result), "runners": ",".join(payloads), "payloads": payloads,
            "env": {reporter_env_name(runner): encode_payload(p) for runner, p in payloads.items()}}


def write_feedback(results: Sequence[SubmissionResult], stems: Sequence[str], config: dict[str, Any],
                   out_dir: Path, html: bool = False, reporter: bool = False) -> list[Path]:
    """Write, per submission, `<stem>.html` and `<stem>.feedback.md` (html) and
    `<stem>.reporter.json` (reporter), next to the reports of `write_reports`.

    Args:
        results: the graded submissions.
        stems: their file-name stems (same order).
        config: the validated configuration.
        out_dir: the report folder.
        html: write the HTML page and its Markdown version.
        reporter: write the reporter payloads.

    Returns:
        The paths written.
    """
    columns = part_columns(config["parts"], results)
    threshold = config.get("training", {}).get("threshold_bleu")
    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for result, stem in zip(results, stems):
        if html:
            page = out_dir / f"{stem}.html"
            write_html(result, page, config["parts"], config["assignment"]["name"], threshold)
            markdown = out_dir / f"{stem}.feedback.md"
            markdown.write_text(render_feedback_markdown(result, columns, threshold), encoding="utf-8")
            written += [page, markdown]
        if reporter:
            path = out_dir / f"{stem}.reporter.json"
            path.write_text(dumps_stable(reporter_document(result)), encoding="utf-8")
            written.append(path)
    return written
