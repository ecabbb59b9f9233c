"""Self-contained HTML feedback for one submission: inline CSS, pictures as data URIs, no network."""

from __future__ import annotations

import html

from autograder.i18n import part_title, t
from autograder.reports.common import (
    ConfigParts,
    format_points,
    format_score,
    graded_possible,
    ordered_parts,
    page_asset,
    part_columns,
    part_possible,
    part_score,
    skip_reason,
)
from autograder.reports.late_text import late_lines
from autograder.reports.markdown import score_cell, status_label
from autograder.reports.sections import ReportView, escape_html, extra_sections
from autograder.results import PartResult, SubmissionResult

# No request may leave the page: images are data URIs, styles inline, scripts none.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

STYLE = page_asset("feedback.css")


def _badge(part: PartResult) -> str:
    if part.skipped:
        return f'<span class="badge skip">{t("report.html.badge.not_graded")}</span>'
    possible = part_possible(part)
    if possible and part.points >= possible:
        return f'<span class="badge pass">{t("report.html.badge.full")}</span>'
    if part.points > 0:
        return f'<span class="badge partial">{t("report.html.badge.partial")}</span>'
    return f'<span class="badge fail">{t("report.html.badge.none")}</span>'


def _bar(part: PartResult) -> str:
    possible = part_possible(part)
    width = 0 if part.skipped or not possible else round(100 * part.points / possible)
    return f'<div class="bar"><span style="width:{width}%"></span></div>'


def _overview(parts: list[PartResult]) -> str:
    rows = []
    for part in parts:
        title = escape_html(part_title(part.part, part.title))
        rows.append(
            f'<tr><td><a href="#part-{html.escape(part.part)}">{title}</a></td>'
            f'<td class="num">{score_cell(part_score(part))}</td><td>{_bar(part)}</td><td>{_badge(part)}</td></tr>'
        )
    return (
        f'<section><h2>{t("report.html.parts")}</h2><table><colgroup><col class="c1"><col class="c2">'
        '<col class="c3"><col class="c4"></colgroup>'
        f'<tr><th>{t("report.part")}</th><th class="num">{t("report.points")}</th><th></th>'
        f"<th>{t('report.html.result')}</th></tr>{''.join(rows)}</table></section>"
    )


def _part_details(part: PartResult, shown: set[str]) -> str:
    title = escape_html(part_title(part.part, part.title))
    head = f'<h3 id="part-{html.escape(part.part)}">{title} {_badge(part)}</h3>'
    if part.skipped:
        return head + f'<p class="note">{escape_html(skip_reason(part) or t("report.html.not_graded_run"))}</p>'
    if not part.checks:
        return head + f'<p class="note">{t("report.html.not_graded_notes")}</p>'
    rows = []
    for check in part.checks:
        if check.skipped:
            state, label = "skip", t("report.html.state.skipped")
        else:
            state, label = (
                ("pass", t("report.html.state.passed")) if check.passed else ("fail", t("report.html.state.failed"))
            )
        message = ""
        if check.message and not check.passed and not check.skipped:
            # One message shared by several checks (e.g. "not defined") is written once.
            text = t("report.same_reason") if check.message in shown else escape_html(check.message)
            shown.add(check.message)
            message = f'<div class="msg">{text}</div>'
        rows.append(
            f"<tr><td><code>{html.escape(check.check_id)}</code>{message}</td>"
            f'<td class="num">{format_score(check.points, check.max_points)}</td>'
            f'<td><span class="badge {state}">{label}</span></td></tr>'
        )
    return (
        head + '<table><colgroup><col class="c1"><col class="c2"><col class="c4"></colgroup>'
        f'<tr><th>{t("report.html.check")}</th><th class="num">{t("report.points")}</th><th></th></tr>'
        f"{''.join(rows)}</table>"
    )


def _list_section(title: str, entries: list[str]) -> str:
    if not entries:
        return ""
    items = "".join(f"<li>{escape_html(entry)}</li>" for entry in entries)
    return f"<section><h2>{html.escape(title)}</h2><ul>{items}</ul></section>"


def render_html(
    result: SubmissionResult,
    config_parts: ConfigParts | None = None,
    assignment: str = "",
    view: ReportView | None = None,
) -> str:
    """The feedback page of one submission as one self-contained HTML document.

    Args:
        result: the graded submission (its extras are drawn by `view`, a training run at least
            generically; "traceback" and "internal_errors" are for staff and never shown).
        config_parts: `config.parts`, for the part order.
        assignment: the assignment's name for the title.
        view: the graded assignment's `report_sections` hook (None: generic sections only).

    Returns:
        The HTML text.
    """
    parts = ordered_parts(result, part_columns(config_parts, [result]))
    total, possible = result.points, graded_possible(result)
    shown: set[str] = set()
    details = "".join(_part_details(part, shown) for part in parts)
    title = f"{assignment} — {result.submission}" if assignment else result.submission
    status = t(
        "report.html.status_line",
        status=html.escape(status_label(result.status)),
        seconds=format_points(round(result.grading_seconds, 1)),
    )
    header = (
        f'<header><h1>{html.escape(title)}</h1><div class="sub">{status}'
        f'</div><div class="score">{format_points(total)} <small>/ {format_points(possible)} '
        f"{t('report.html.points_word')}</small></div></header>"
    )
    body = "".join(
        [
            header,
            _overview(parts),
            _list_section(t("late.heading"), late_lines(result)),
            _list_section(t("report.load_problems_long"), result.load_problems),
            _list_section(t("report.notes"), result.notes),
            *(section.html() for section in extra_sections(result.extras, view)),
            f"<section><h2>{t('report.html.checks')}</h2>{details}</section>",
        ]
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{t("report.html.lang")}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )
