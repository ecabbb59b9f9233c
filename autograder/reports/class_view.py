"""The class page for the instructor: class.html (inline SVG, no network) with class.json and class_*.csv."""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.i18n import assignment_title, part_title, t, use_language
from autograder.reports.class_data import CHECK_COLUMNS, class_data
from autograder.reports.common import csv_text, format_points, page_asset
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

# The student table sorts by the column header clicked: numbers by the cell's data-v, text in Korean order.
SORT_SCRIPT = page_asset("sort_table.js").strip()
# No request may leave the page: styles inline, pictures inline SVG, the one script above, pinned by its hash.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()}'"
)
STYLE = page_asset("class.css")
# Histogram geometry (SVG user units): plot area inside margins for the axis labels.
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 320, 170, 30, 34, 16


def _number(value: float | None, digits: int = 0) -> str:
    """Points as the reports write them; with `digits`, that many decimals (a 0-1 metric near its bar)."""
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if digits else format_points(round(value, 4))


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


def _plot(title: str, series: dict[str, Any], digits: int = 0) -> str:
    figures = t(
        "class.figures",
        count=series["count"],
        mean=_number(series["mean"], digits),
        median=_number(series["median"], digits),
        possible=_number(series["possible"]),
    )
    if series.get("discrimination") is not None:
        figures += f"<br>{t('class.discrimination', value=_number(series['discrimination'], 2))}"
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


def _count_table(heading: str, counts: dict[str, int], name: Callable[[str], str]) -> str:
    """A table of how many there are of each kind (a status, a stop reason), each kind in words by `name`."""
    rows = "".join(f'<tr><td>{escape_html(name(key))}</td><td class="num">{n}</td></tr>' for key, n in counts.items())
    return f'<table><tr><th>{heading}</th><th class="num">{t("class.count")}</th></tr>{rows}</table>'


def _statuses_section(data: dict[str, Any]) -> str:
    table = _count_table(t("report.status"), data["statuses"], _status_name)
    return f'<section><h2>{t("class.statuses")}</h2>{table}<p class="note">{t("class.statuses_note")}</p></section>'


def _status_name(status: str) -> str:
    return t(f"class.status.{status}") if status in ("missing", "late") else status_label(status)


def _checks_section(data: dict[str, Any], titles: dict[str, str]) -> str:
    rows = "".join(
        f'<tr><td class="num">{rank}</td><td>{escape_html(titles.get(row["part"], row["part"]))}</td>'
        f"<td><code>{html.escape(row['check_id'])}</code></td>"
        f'<td class="num">{row["failed"]} / {row["graded"]}</td>'
        f'<td class="num">{_number(row["discrimination"], 2)}</td>'
        f"<td>{escape_html(row['message'])}<details><summary>{t('class.failed_by', count=len(row['failed_by']))}"
        f"</summary>{escape_html(', '.join(row['failed_by']))}</details></td></tr>"
        for rank, row in enumerate(data["checks"], start=1)
        if row["failed"]
    )
    body = rows or f'<tr><td colspan="6">{t("class.no_failures")}</td></tr>'
    return (
        f'<section><h2>{t("class.checks")}</h2><p class="note">{t("class.checks_note")}</p><table>'
        f'<tr><th class="num">#</th><th>{t("class.part")}</th><th>{t("report.html.check")}</th>'
        f'<th class="num">{t("class.failed")}</th><th class="num">{t("class.discrimination_short")}</th>'
        f"<th>{t('class.message')}</th></tr>{body}</table></section>"
    )


def _students_section(data: dict[str, Any], titles: dict[str, str]) -> str:
    """Every student, one row each, sortable by any column, linked to the student's report."""
    metric = bool(data["training"])
    head = [t("class.student"), t("report.status"), *titles.values(), t("class.total"), t("class.status.late")]
    head += [data["training"]["metric"] or t("class.metric")] if metric else []
    rows = []
    for row in data["students"]:
        name = escape_html(row["name"])
        link = f'<a href="{html.escape(row["report"])}">{name}</a>' if row["report"] else name
        cells = [f"<td>{link}</td>", f"<td>{escape_html(status_label(row['status']))}</td>"]
        numbers = [*(row["parts"].get(part) for part in titles), row["total"], row["late_days"] or None]
        cells += [f'<td class="num" data-v="{value or 0}">{_number(value)}</td>' for value in numbers]
        if metric:
            cells.append(f'<td class="num" data-v="{row["metric"] or 0}">{_number(row["metric"], 3)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    header = "".join(f"<th>{escape_html(title)}</th>" for title in head)
    return (
        f'<section><h2>{t("class.students")}</h2><p class="note">{t("class.students_note")}</p>'
        f'<table class="sortable"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
    )


def _lateness_section(data: dict[str, Any]) -> str:
    lateness = data["lateness"]
    if not lateness["count"]:
        return ""
    plot = _plot(t("class.days_late"), lateness, 2)
    return f'<section><h2>{t("class.lateness")}</h2><div class="grid">{plot}</div></section>'


def _stop_reason(reason: str) -> str:
    """A training run's stop reason in words (the code itself when the catalogue has no words for it)."""
    try:
        return t(f"class.stop.{reason}")
    except KeyError:
        return reason


def _training_section(data: dict[str, Any]) -> str:
    training = data["training"]
    if training is None:
        return ""
    metric = training["metric"] or t("class.metric")
    stops = training["stop_reasons"]
    stop_table = _count_table(t("class.stop_reason"), stops, _stop_reason) if stops else ""
    line = t(
        "class.training_line",
        trained=training["trained"],
        reached=training["reached"],
        threshold=_number(training["threshold"], 3),
        early=training["early_stops"],
    )
    return (
        f'<section><h2>{t("class.training")}</h2><p>{escape_html(line)}</p><div class="grid">'
        f"{_plot(metric, training['metric_series'], 3)}{_plot(t('class.steps_to_bar'), training['steps_series'])}"
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
    titles = {s["part"]: part_title(s["part"], s["title"]) for s in data["scores"] if s["part"] != "total"}
    return (
        f'<!DOCTYPE html><html lang="{t("report.html.lang")}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{escape_html(title)}</title><style>{STYLE}</style></head><body><main>"
        f"<header><h1>{escape_html(title)}</h1></header>"
        f"{_statuses_section(data)}{_students_section(data, titles)}{_scores_section(data)}"
        f"{_checks_section(data, titles)}{_training_section(data)}{_lateness_section(data)}"
        f"</main><script>{SORT_SCRIPT}</script></body></html>\n"
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
    links: Sequence[str] = (),
) -> list[Path]:
    """Write class.html, class.json and the class_*.csv tables for a batch.

    Args:
        results: the batch's results with a current stored result.
        config: the validated configuration (parts, training part, language).
        assignment: the graded assignment (its message catalogue).
        out_dir: the folder to write into (created when missing).
        missing: labels of the batch's submissions without a current result.
        links: each result's report file in out_dir (same order; empty: the table links nothing).

    Returns:
        The paths written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with use_language(config.feedback.language, assignment.messages_dir):
        title = assignment_title(config.assignment.title)  # the course language's, as every report shows
        figures = assignment.training_figures
        data = class_data(results, config.parts, config.training_part(), figures, title, missing, links)
        texts = {CLASS_HTML: render_class_html(data), CLASS_JSON: dumps_stable(data), **class_csvs(data)}
    for name, text in texts.items():  # the CSVs with a BOM: Excel, what Korean staff open them with, reads Hangul then
        (out_dir / name).write_text(text, encoding="utf-8-sig" if name.endswith(".csv") else "utf-8")
    return [out_dir / name for name in texts]
