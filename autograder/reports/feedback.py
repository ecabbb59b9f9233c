"""Per-submission feedback files: HTML page, Markdown version (job summaries), reporter payloads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.assignment import assignment_of
from autograder.reports.common import PartColumn, graded_possible, graded_total, part_columns
from autograder.reports.figures import training_series
from autograder.reports.files import check_stems
from autograder.reports.html import write_html
from autograder.reports.i18n import t, use_language
from autograder.reports.markdown import render_submission
from autograder.reports.md_safe import md_text
from autograder.reports.reporter_payload import encode_payload, part_payloads, reporter_env_name
from autograder.reports.submission_json import dumps_stable
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.config import GraderConfig

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
    lines = [f"**{t('report.mask.title')}** ({t('report.mask.subtitle')})", ""]
    if picture.get("error"):
        return "\n".join([*lines, f"- {md_text(picture['error'])}", ""])
    lines.extend(f"- {md_text(finding)}" for finding in picture.get("findings", []))
    legend = t("report.mask.legend", open=OPEN, blocked=BLOCKED, wrong_open=WRONG_OPEN, wrong_blocked=WRONG_BLOCKED)
    lines.extend(["", md_text(legend), ""])
    for row, (mask, expected, labels) in enumerate(
        zip(picture["mask"], picture["expected"], picture["labels"], strict=False)
    ):
        labels = [str(label).replace("`", "'") for label in labels]  # inside a ``` fence
        width = max(len(label) for label in labels)
        grid = [f"{t('report.mask.sentence', n=row + 1)}: {' '.join(labels)}"]
        for query, (mine, right) in enumerate(zip(mask, expected, strict=False)):
            cells = [
                (OPEN if a else BLOCKED) if a == b else (WRONG_OPEN if a else WRONG_BLOCKED)
                for a, b in zip(mine, right, strict=False)
            ]
            grid.append(f"{labels[query]:>{width}} {' '.join(cells)}")
        lines.extend(["```text", *grid, "```", ""])
    return "\n".join(lines)


def training_markdown(training: Mapping[str, Any] | None, threshold: float | None = None) -> str:
    """A few lines about the training run: BLEU, how it was measured, a memorisation flag.

    Args:
        training: `extras["training"]`, or None.
        threshold: the BLEU bar.

    Returns:
        Markdown.
    """
    if not training:
        return ""
    lines = []
    memorisation = training.get("memorisation")
    if isinstance(memorisation, Mapping) and memorisation.get("flagged"):
        lines.append(
            f"> **{t('report.memorised_banner')}** "
            + md_text(
                t(
                    "report.memorised_detail",
                    validation=memorisation["validation_bleu"],
                    test=memorisation["test_bleu"],
                    gap=memorisation["gap"],
                    threshold=memorisation["threshold"],
                )
            )
        )
    series = training_series(training)
    if series["final_bleu"] is not None:
        bar = series["threshold"] if series["threshold"] is not None else threshold
        method = f" {md_text(training['method'])}" if isinstance(training.get("method"), str) else ""
        text = t("report.training_line", bleu=series["final_bleu"]) + (
            t("report.training_bar", bar=bar) if bar is not None else ""
        )
        lines.append(f"**{t('report.training_run')}:** {md_text(text)}.{method}")
    return "\n\n".join(lines) + "\n" if lines else ""


def render_feedback_markdown(
    result: SubmissionResult, columns: Sequence[PartColumn] = (), bleu_threshold: float | None = None
) -> str:
    """The Markdown version of the HTML feedback: the parts table, then the mask and training.

    Args:
        result: one graded submission.
        columns: the part columns (grader.yml order).
        bleu_threshold: the training part's BLEU bar.

    Returns:
        Markdown text.
    """
    sections = [
        render_submission(result, columns),
        mask_markdown(result.extras.get("attention_mask")),
        training_markdown(result.extras.get("training"), bleu_threshold),
    ]
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
        "total": graded_total(result),
        "possible": graded_possible(result),
        "runners": ",".join(payloads),
        "payloads": payloads,
        "env": {reporter_env_name(runner): encode_payload(p) for runner, p in payloads.items()},
    }


def write_feedback(
    results: Sequence[SubmissionResult],
    stems: Sequence[str],
    config: GraderConfig,
    out_dir: Path,
    html: bool = False,
    reporter: bool = False,
) -> list[Path]:
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
    check_stems(stems)
    with use_language(config.feedback.language, assignment_of(config).messages_dir):
        return _write_feedback(results, stems, config, out_dir, html, reporter)


def _write_feedback(
    results: Sequence[SubmissionResult],
    stems: Sequence[str],
    config: GraderConfig,
    out_dir: Path,
    html: bool,
    reporter: bool,
) -> list[Path]:
    columns = part_columns(config.parts, results)
    threshold = config.training.threshold_bleu
    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for result, stem in zip(results, stems, strict=True):
        if html:
            page = out_dir / f"{stem}.html"
            write_html(result, page, config.parts, config.assignment.title, threshold)
            markdown = out_dir / f"{stem}.feedback.md"
            markdown.write_text(render_feedback_markdown(result, columns, threshold), encoding="utf-8")
            written += [page, markdown]
        if reporter:
            path = out_dir / f"{stem}.reporter.json"
            path.write_text(dumps_stable(reporter_document(result)), encoding="utf-8")
            written.append(path)
    return written
