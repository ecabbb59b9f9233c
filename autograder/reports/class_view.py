"""The class page for the instructor: class.html (inline SVG, no network) with class.json and class_*.csv."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.i18n import assignment_title, part_title, t, use_language
from autograder.reports.class_data import CHECK_COLUMNS, class_data
from autograder.reports.common import csv_text, format_points
from autograder.reports.markdown import status_label
from autograder.reports.md_safe import csv_cell
from autograder.reports.sections import escape_html
from autograder.reports.submission_json import dumps_stable
from autograder.results import SubmissionResult

if TYPE_CHECKING:
    from autograder.assignment import Assignment
    from autograder.config import GraderConfig

CLASS_HTML = "class.html"
CLASS_JSON = "class.json"
CLASS_CHECKS_CSV = "class_checks.csv"
CLASS_DISTRIBUTIONS_CSV = "class_distributions.csv"
CLASS_STATUSES_CSV = "class_statuses.csv"
CLASS_FILES = (CLASS_HTML, CLASS_JSON, CLASS_CHECKS_CSV, CLASS_DISTRIBUTIONS_CSV, CLASS_STATUSES_CSV)

# No request may leave the page: styles inline, pictures inline SVG, scripts none.
CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f7fafc;color:#1a202c}
main{max-width:1100px;margin:0 auto;padding:24px}
header{background:#1a365d;color:#fff;padding:18px 24px;border-radius:10px} header h1{margin:0;font-size:20px}
section{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:16px 20px;margin-top:18px}
h2{font-size:17px;margin:0 0 10px} h3{font-size:14px;margin:0 0 4px}
.grid{display:flex;flex-wrap:wrap;gap:14px} .plot{flex:0 0 320px} .plot p{margin:2px 0;font-size:12px;color:#4a5568}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #edf2f7;vertical-align:top}
td.num,th.num{text-align:right;white-space:nowrap} .note{color:#4a5568;font-size:13px}
code{background:#edf2f7;padding:0 3px;border-radius:3px}
"""
# Histogram geometry (SVG user units): plot area inside margins for the axis labels.
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 320, 170, 30, 34, 16


def _number(value: float | None) -> str:
    return "-" if value is None else format_points(round(value, 4))


def histogram_svg(bins: Sequence[dict[str, float]], label: str) -> str:
    """An inline SVG bar chart of histogram bins, each bar with its count above it.

    Args:
        bins: [{"low", "high", "count"}] (`class_data.histogram`).
        label: the accessible name of the picture (escaped here).

    Returns:
        An `<svg>` element.
    """
    top = max((b["count"] for b in bins), default=0) or 1
    width = (WIDTH - LEFT - 6) / max(len(bins), 1)
    height = HEIGHT - BOTTOM - TOP
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>',
        f'<line x1="{LEFT}" y1="{TOP + height}" x2="{WIDTH - 4}" y2="{TOP + height}" stroke="#718096"/>',
    ]
    for index, entry in enumerate(bins):
        bar = height * entry["count"] / top
        x, y = LEFT + index * width, TOP + height - bar
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{width - 2:.1f}" height="{bar:.1f}" fill="#3182ce">'
            f"<title>{_number(entry['low'])}-{_number(entry['high'])}: {entry['count']}</title></rect>"
        )
        if entry["count"]:
            parts.append(
                f'<text x="{x + width / 2:.1f}" y="{y - 3:.1f}" font-size="10" text-anchor="middle">'
                f"{entry['count']}</text>"
            )
    if bins:  # the axis' two ends and middle
        low, high = bins[0]["low"], bins[-1]["high"]
        for x, value, anchor in (
            (LEFT, low, "start"),
            ((LEFT + WIDTH - 6) / 2, (low + high) / 2, "middle"),
            (WIDTH - 6, high, "end"),
        ):
            parts.append(
                f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 14}" font-size="11" text-anchor="{anchor}">'
                f"{_number(value)}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _plot(title: str, series: dict[str, Any]) -> str:
    figures = t(
        "class.figures",
        count=series["count"],
        mean=_number(series["mean"]),
        median=_number(series["median"]),
        possible=_number(series["possible"]),
    )
    return (
        f'<div class="plot"><h3>{escape_html(title)}</h3>{histogram_svg(series["histogram"], title)}'
        f"<p>{figures}</p></div>"
    )


def _scores_section(data: dict[str, Any]) -> str:
    plots = [  # a part nobody was graded on in this batch (e.g. training disabled) has no picture
        _plot(t("class.total") if s["part"] == "total" else part_title(s["part"], s["title"]), s)
        for s in data["scores"]
        if s["count"] or s["part"] == "total"
    ]
    return f'<section><h2>{t("class.scores")}</h2><div class="grid">{"".join(plots)}</div></section>'


def _statuses_section(data: dict[str, Any]) -> str:
    rows = "".join(
        f'<tr><td>{escape_html(_status_name(status))}</td><td class="num">{count}</td></tr>'
        for status, count in data["statuses"].items()
    )
    return (
        f"<section><h2>{t('class.statuses')}</h2><table><tr><th>{t('report.status')}</th>"
        f'<th class="num">{t("class.count")}</th></tr>{rows}</table>'
        f'<p class="note">{t("class.statuses_note")}</p></section>'
    )


def _status_name(status: str) -> str:
    return t(f"class.status.{status}") if status in ("missing", "late") else status_label(status)


def _checks_section(data: dict[str, Any]) -> str:
    rows = "".join(
        f'<tr><td class="num">{rank}</td><td><code>{html.escape(row["check_id"])}</code></td>'
        f'<td class="num">{row["failed"]} / {row["graded"]}</td><td>{escape_html(row["message"])}</td></tr>'
        for rank, row in enumerate(data["checks"], start=1)
        if row["failed"]
    )
    body = rows or f'<tr><td colspan="4">{t("class.no_failures")}</td></tr>'
    return (
        f'<section><h2>{t("class.checks")}</h2><p class="note">{t("class.checks_note")}</p><table>'
        f'<tr><th class="num">#</th><th>{t("report.html.check")}</th><th class="num">{t("class.failed")}</th>'
        f"<th>{t('class.message')}</th></tr>{body}</table></section>"
    )


def _training_section(data: dict[str, Any]) -> str:
    training = data["training"]
    if training is None:
        return ""
    metric = training["metric"] or t("class.metric")
    stops = "".join(
        f'<tr><td><code>{html.escape(reason)}</code></td><td class="num">{count}</td></tr>'
        for reason, count in training["stop_reasons"].items()
    )
    stop_table = (
        f'<table><tr><th>{t("class.stop_reason")}</th><th class="num">{t("class.count")}</th></tr>{stops}</table>'
        if stops
        else ""
    )
    line = t(
        "class.training_line",
        trained=training["trained"],
        reached=training["reached"],
        threshold=_number(training["threshold"]),
        early=training["early_stops"],
    )
    return (
        f'<section><h2>{t("class.training")}</h2><p>{escape_html(line)}</p><div class="grid">'
        f"{_plot(metric, training['metric_series'])}{_plot(t('class.steps_to_bar'), training['steps_series'])}"
        f"</div>{stop_table}</section>"
    )


def render_class_html(data: dict[str, Any]) -> str:
    """The class page: statuses, score histograms, most failed checks, the training part.

    Args:
        data: from `class_data.class_data`.

    Returns:
        A self-contained HTML document (call inside `use_language` for the page's language).
    """
    title = t("class.title", assignment=data["assignment"], count=data["submissions"])
    return (
        f'<!DOCTYPE html><html lang="{t("report.html.lang")}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{escape_html(title)}</title><style>{STYLE}</style></head><body><main>"
        f"<header><h1>{escape_html(title)}</h1></header>"
        f"{_statuses_section(data)}{_scores_section(data)}{_checks_section(data)}{_training_section(data)}"
        "</main></body></html>\n"
    )


def _csv_text(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return csv_text([header, *([csv_cell(str(cell)) for cell in row] for row in rows)])


def class_csvs(data: dict[str, Any]) -> dict[str, str]:
    """The page's tables as CSV texts (cells never start a spreadsheet formula).

    Args:
        data: from `class_data.class_data`.

    Returns:
        File name -> text: the statuses, the failed checks, and every histogram bin.
    """
    series = [(s["part"], s) for s in data["scores"]]
    if data["training"] is not None:
        series += [("training_metric", data["training"]["metric_series"])]
        series += [("training_steps_to_bar", data["training"]["steps_series"])]
    return {
        CLASS_STATUSES_CSV: _csv_text(["status", "count"], list(data["statuses"].items())),
        CLASS_CHECKS_CSV: _csv_text(CHECK_COLUMNS, [[c[key] for key in CHECK_COLUMNS] for c in data["checks"]]),
        CLASS_DISTRIBUTIONS_CSV: _csv_text(
            ["series", "bin_low", "bin_high", "count"],
            [[name, b["low"], b["high"], b["count"]] for name, s in series for b in s["histogram"]],
        ),
    }


def write_class_view(
    results: Sequence[SubmissionResult],
    config: GraderConfig,
    assignment: Assignment,
    out_dir: Path,
    missing: Sequence[str] = (),
) -> list[Path]:
    """Write class.html, class.json and the class_*.csv tables for a batch.

    Args:
        results: the batch's results with a current stored result.
        config: the validated configuration (parts, training part, language).
        assignment: the graded assignment (its message catalogue).
        out_dir: the folder to write into (created when missing).
        missing: labels of the batch's submissions without a current result.

    Returns:
        The paths written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with use_language(config.feedback.language, assignment.messages_dir):
        title = assignment_title(config.assignment.title)  # the course language's, as every report shows
        data = class_data(results, config.parts, config.training_part(), assignment.training_figures, title, missing)
        texts = {CLASS_HTML: render_class_html(data), CLASS_JSON: dumps_stable(data), **class_csvs(data)}
    for name, text in texts.items():  # the CSVs with a BOM: Excel, what Korean staff open them with, reads Hangul then
        (out_dir / name).write_text(text, encoding="utf-8-sig" if name.endswith(".csv") else "utf-8")
    return [out_dir / name for name in texts]
