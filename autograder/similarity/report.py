"""The similarity report: pairs.csv (most similar first) and pairs.html (side by side, matches marked)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from autograder.i18n import t
from autograder.reports.common import csv_text, page_asset, write_csv
from autograder.reports.md_safe import csv_cell
from autograder.similarity.compare import Pair, Submission, compare_pair, copy_groups

PAIRS_CSV = "pairs.csv"
PAIRS_HTML = "pairs.html"
GROUPS_CSV = "groups.csv"  # group,size,members: everyone joined by a chain of reported pairs
# part: the template cell (its first code line) whose code gave the figure, "*" the whole notebooks.
CSV_HEADER = ["rank", "first", "second", "similarity", "part", "first_share", "second_share", "matched_chars"]
# No request may leave the page: styles inline, no scripts, no pictures.
CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = page_asset("similarity.css")


def pairs_csv(pairs: Sequence[Pair]) -> str:
    """The pairs as CSV, one row per pair with both names, in the given (ranked) order.

    Args:
        pairs: the reported pairs, most similar first.

    Returns:
        CSV text (file names never start a spreadsheet formula).
    """
    rows = [
        [
            rank,
            csv_cell(pair.first),
            csv_cell(pair.second),
            f"{pair.similarity:.4f}",
            csv_cell(pair.part),
            f"{pair.first_share:.4f}",
            f"{pair.second_share:.4f}",
            pair.matched_chars,
        ]
        for rank, pair in enumerate(pairs, start=1)
    ]
    return csv_text([CSV_HEADER, *rows])


def marked_code(code: str, slices: np.ndarray) -> str:
    """Code as HTML with the matching character ranges inside `<mark>`.

    Args:
        code: the submission's own code.
        slices: 2 x n array of [start, end) character offsets (copydetect's, non-overlapping).

    Returns:
        Escaped HTML text.
    """
    pieces, position = [], 0
    for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist(), strict=True)):
        start, end = max(start, position), min(end, len(code))
        if start >= end:
            continue
        pieces.append(html.escape(code[position:start]))
        pieces.append(f"<mark>{html.escape(code[start:end])}</mark>")
        position = end
    pieces.append(html.escape(code[position:]))
    return "".join(pieces)


def pairs_html(pairs: Sequence[Pair], submissions: Sequence[Submission], limit: int) -> str:
    """A page with the ranked table and, for the first `limit` pairs, both codes side by side.

    Args:
        pairs: the reported pairs, most similar first.
        submissions: every submission (for its code), by label.
        limit: how many pairs get the side-by-side view.

    Returns:
        A self-contained HTML document.
    """
    by_label = {s.label: s for s in submissions}
    rows = "".join(
        f'<tr><td class="num">{rank}</td><td><a href="#pair-{rank}">{html.escape(p.first)}</a></td>'
        f'<td>{html.escape(p.second)}</td><td class="num">{p.similarity:.0%}</td>'
        f'<td class="num">{p.matched_chars}</td></tr>'
        for rank, p in enumerate(pairs, start=1)
    )
    views = []
    for rank, pair in enumerate(pairs[:limit], start=1):
        first, second = by_label[pair.first], by_label[pair.second]
        _, (first_slices, second_slices) = compare_pair(first, second)
        views.append(
            f'<section id="pair-{rank}"><h2>#{rank} · {pair.similarity:.0%} · <code>{html.escape(pair.part)}</code>'
            '</h2><div class="sides">'
            f'<div class="side"><h2>{html.escape(first.label)} ({pair.first_share:.0%})</h2>'
            f"<pre>{marked_code(first.code, first_slices)}</pre></div>"
            f'<div class="side"><h2>{html.escape(second.label)} ({pair.second_share:.0%})</h2>'
            f"<pre>{marked_code(second.code, second_slices)}</pre></div></div></section>"
        )
    groups = "".join(
        f'<tr><td class="num">{number}</td><td class="num">{len(group)}</td>'
        f"<td>{html.escape(', '.join(group))}</td></tr>"
        for number, group in enumerate(copy_groups(pairs), start=1)
    )
    groups_table = (
        f"<section><h2>{t('similarity.groups')}</h2><p>{html.escape(t('similarity.groups_note'))}</p><table><tr>"
        f"<th>#</th><th>{t('similarity.group_size')}</th><th>{t('similarity.members')}</th></tr>{groups}</table></section>"
        if groups
        else ""
    )
    title = t("similarity.title", count=len(submissions), pairs=len(pairs))
    return (
        f'<!DOCTYPE html><html lang="{t("report.html.lang")}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}</style></head><body><main><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(t('similarity.note'))}</p><section><table><tr><th>#</th><th>{t('similarity.first')}</th>"
        f"<th>{t('similarity.second')}</th><th>{t('similarity.similarity')}</th><th>{t('similarity.matched')}</th>"
        f"</tr>{rows}</table></section>{groups_table}{''.join(views)}</main></body></html>\n"
    )


def write_similarity_report(
    pairs: Sequence[Pair], submissions: Sequence[Submission], out_dir: Path, limit: int = 50
) -> list[Path]:
    """Write pairs.csv, groups.csv and pairs.html into out_dir (created when missing).

    Args:
        pairs: the reported pairs, most similar first.
        submissions: every submission compared.
        out_dir: the destination folder.
        limit: pairs shown side by side in the HTML page.

    Returns:
        The paths: pairs.csv, groups.csv, pairs.html.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, groups_path, html_path = out_dir / PAIRS_CSV, out_dir / GROUPS_CSV, out_dir / PAIRS_HTML
    write_csv(csv_path, pairs_csv(pairs))
    groups = [[n, len(g), csv_cell(" ".join(g))] for n, g in enumerate(copy_groups(pairs), start=1)]
    write_csv(groups_path, csv_text([["group", "size", "members"], *groups]))
    html_path.write_text(pairs_html(pairs, submissions, limit), encoding="utf-8")
    return [csv_path, groups_path, html_path]
