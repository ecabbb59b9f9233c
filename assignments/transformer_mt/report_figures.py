"""Part 2's feedback pictures as SVG: the look-ahead mask grids and the training curve, in the catalogue's language."""

# Written as SVG text rather than drawn with matplotlib: a page's pictures take milliseconds instead
# of seconds (a batch of 300 HTML reports spent most of its report time in matplotlib), and their
# words come from this assignment's catalogue, so they are Korean by default like the rest of the
# page (the browser brings the fonts; matplotlib's bundled fonts have no Hangul). Every text that
# reaches a picture goes through `_text` (XML escaping), tokens included.

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

from assignments.transformer_mt.messages import t

OPEN_COLOUR = "#2b6cb0"  # may attend
BLOCKED_COLOUR = "#e2e8f0"  # blocked
WRONG_COLOUR = "#e53e3e"  # differs from the correct mask
LOSS_COLOUR = "#2b6cb0"
BLEU_COLOUR = "#c05621"
FONT = 'font-family="sans-serif"'
CELL = 20  # px per mask cell
LEFT_ROOM, TOP_ROOM = 90, 60  # px left of a grid (row labels) and above it (title, rotated column labels)


def svg_data_uri(svg: str) -> str:
    """An SVG document as a data URI for an <img> (its texts stay out of the page's own text).

    Args:
        svg: the document.

    Returns:
        "data:image/svg+xml;base64,...".
    """
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _text(x: float, y: float, words: str, size: int = 12, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" {FONT} {extra}>{escape(words)}</text>'


def _document(width: float, height: float, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}"><rect width="100%" height="100%" fill="white"/>'
        + "".join(body)
        + "</svg>"
    )


def _grid(
    left: float,
    top: float,
    grid: Sequence[Sequence[int]],
    labels: Sequence[str],
    title: str,
    wrong: Sequence[Sequence[bool]] | None,
) -> list[str]:
    """One mask as cells (row = query, column = key) with token labels; `top` is the title's line."""
    x0, y0 = left + LEFT_ROOM, top + TOP_ROOM
    parts = [_text(left + 10, top + 14, title, 13, 'font-weight="bold"')]
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            x, y = x0 + j * CELL, y0 + i * CELL
            colour = OPEN_COLOUR if value else BLOCKED_COLOUR
            parts.append(f'<rect x="{x}" y="{y}" width="{CELL - 2}" height="{CELL - 2}" fill="{colour}"/>')
            if wrong is not None and i < len(wrong) and j < len(wrong[i]) and wrong[i][j]:
                mark = f'fill="{WRONG_COLOUR}" font-weight="bold" text-anchor="middle"'
                parts.append(_text(x + (CELL - 2) / 2, y + CELL - 5, "✗", 15, mark))
    for k, label in enumerate(labels[: len(grid)]):
        middle = k * CELL + (CELL - 2) / 2
        parts.append(_text(x0 - 4, y0 + middle + 4, label, 10, 'text-anchor="end"'))
        column = x0 + middle + 3
        parts.append(_text(column, y0 - 4, label, 10, f'transform="rotate(-45 {column:.1f} {y0 - 4:.1f})"'))
    return parts


def mask_figure_svg(picture: Mapping[str, Any]) -> str:
    """The student's mask next to the correct one, one row per example sentence.

    Args:
        picture: `extras["attention_mask"]` (attention_view.collect_mask_picture).

    Returns:
        An SVG document. Without a usable student mask only the correct masks are drawn.
    """
    expected, labels, mask = picture["expected"], picture["labels"], picture.get("mask")
    size = max((len(grid) for grid in expected), default=0)
    block = max(LEFT_ROOM + size * CELL + 30, 250)  # one grid with its labels and a gap (and its title)
    columns = 2 if mask is not None else 1
    legend = t("report.figure.legend")
    if mask is not None and not picture.get("matches"):
        legend += t("report.figure.legend_wrong")
    body = [_text(10, 20, legend, 13)]
    top = 34
    for row, correct in enumerate(expected):
        body.append(_text(10, top + 14, " ".join(labels[row]), 12, 'fill="#4a5568"'))
        n = row + 1
        if mask is not None:
            pairs = zip(mask[row], correct, strict=False)  # a student's mask may have another shape
            wrong = [[a != b for a, b in zip(mine, right, strict=False)] for mine, right in pairs]
            body += _grid(0, top + 22, mask[row], labels[row], t("report.figure.your_mask", n=n), wrong)
        body += _grid((columns - 1) * block, top + 22, correct, labels[row], t("report.figure.correct_mask", n=n), None)
        top += 22 + TOP_ROOM + size * CELL + 16
    body.append(_text(10, top + 4, f"{t('report.figure.query_axis')} · {t('report.figure.key_axis')}", 11))
    return _document(columns * block + 10, top + 16, body)


def _ticks(high: float, count: int = 5) -> list[float]:
    return [high * k / (count - 1) for k in range(count)]


def training_figure_svg(series: Mapping[str, Any], threshold: float | None) -> str | None:
    """The training loss curve with validation BLEU on a second axis, and the bar as a dashed line.

    Args:
        series: `report_view.training_series(extras["training"])`.
        threshold: the BLEU bar (None: no line).

    Returns:
        An SVG document, or None when there is nothing to plot.
    """
    losses, bleus = series["loss"], series["bleu"]
    if not losses and not bleus:
        return None
    width, height, left, right, top, bottom = 720, 330, 70, 70, 36, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    x_high = max([x for x, _ in [*losses, *bleus]] + [1.0])
    loss_high = max([y for _, y in losses] + [1e-9]) * 1.05
    bleu_high = max([y for _, y in bleus] + [threshold or 0.0, 0.05]) * 1.15

    def to_x(x: float) -> float:
        return left + plot_w * x / x_high

    def to_y(y: float, high: float) -> float:  # high: the top of this value's axis
        return top + plot_h * (1 - y / high)

    def polyline(series: list[tuple[float, float]], high: float, colour: str) -> str:
        points = " ".join(f"{to_x(x):.1f},{to_y(y, high):.1f}" for x, y in series)
        return f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>'

    body = [
        _text(width / 2, 22, t("report.figure.training_title"), 14, 'text-anchor="middle" font-weight="bold"'),
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#a0aec0"/>',
    ]
    for x in _ticks(x_high):
        body.append(_text(to_x(x), top + plot_h + 16, f"{x:.3g}", 10, 'text-anchor="middle"'))
    x_label = t(f"report.figure.{series['x_label']}")
    body.append(_text(left + plot_w / 2, height - 10, x_label, 12, 'text-anchor="middle"'))
    if losses:
        body.append(polyline(losses, loss_high, LOSS_COLOUR))
        for y in _ticks(loss_high):
            body.append(
                _text(left - 6, to_y(y, loss_high) + 4, f"{y:.3g}", 10, f'text-anchor="end" fill="{LOSS_COLOUR}"')
            )
        body.append(_side_label(18, top + plot_h / 2, t("report.figure.loss"), LOSS_COLOUR))
    if bleus or threshold is not None:
        for y in _ticks(bleu_high):
            body.append(_text(left + plot_w + 6, to_y(y, bleu_high) + 4, f"{y:.3g}", 10, f'fill="{BLEU_COLOUR}"'))
        body.append(_side_label(width - 14, top + plot_h / 2, t("report.figure.bleu"), BLEU_COLOUR))
    if bleus:
        body.append(polyline(bleus, bleu_high, BLEU_COLOUR))
        for x, y in bleus:
            body.append(f'<circle cx="{to_x(x):.1f}" cy="{to_y(y, bleu_high):.1f}" r="3" fill="{BLEU_COLOUR}"/>')
    if threshold is not None:
        y = to_y(threshold, bleu_high)
        body.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="{BLEU_COLOUR}" '
            'stroke-dasharray="6 4"/>'
        )
        bar = t("report.figure.bar", bar=threshold)
        body.append(_text(left + plot_w - 4, y - 4, bar, 10, f'text-anchor="end" fill="{BLEU_COLOUR}"'))
    return _document(width, height, body)


def _side_label(x: float, y: float, words: str, colour: str) -> str:
    """An axis title written bottom-to-top beside the plot."""
    return _text(x, y, words, 12, f'text-anchor="middle" fill="{colour}" transform="rotate(-90 {x:.1f} {y:.1f})"')
