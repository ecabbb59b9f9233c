"""The feedback's sections drawn from a submission's report extras: the assignment's own, else generic ones."""

# What an extra means (a picture of the student's output, a training run's figures) is the
# assignment's business: its `Assignment.report_sections` hook turns the extras into finished
# sections, in its own words and language. The engine only places them (after the notes, before
# the checks) and, for a training part whose assignment draws nothing, shows the verdict it has.

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from autograder.i18n import t

TRAINING = "training"  # the extras entry of the training part (autograder.part_kinds.TrainingPart)


def _nothing() -> str:
    return ""


@dataclass(frozen=True)
class ReportSection:
    """One block of a submission's feedback, in the HTML page and in its Markdown version.

    Each format is rendered only when asked for (a page's pictures are not drawn for the Markdown).
    """

    key: str  # the extras entry it draws (TRAINING replaces the engine's generic training section)
    # () -> a <section> element (its student-derived strings escaped, e.g. by `escape_html`); "": none
    html: Callable[[], str] = _nothing
    # () -> Markdown (its student-derived strings through reports.md_safe); "": none
    markdown: Callable[[], str] = _nothing


# (the submission's report extras) -> the assignment's sections, in the order shown; must not
# raise on extras it did not write (a result from another grader version, a hand-made fixture).
ReportView = Callable[[Mapping[str, Any]], list[ReportSection]]


def escape_html(value: Any) -> str:
    """Text for an HTML page: escaped, with `code` spans shown as code and line breaks kept.

    Args:
        value: any value (shown as `str(value)`).

    Returns:
        HTML text.
    """
    escaped = html.escape(str(value))
    escaped = re.sub(r"`([^`\n]+)`", r"<code>\1</code>", escaped)
    return escaped.replace("\n", "<br>")


def training_html(training: Mapping[str, Any] | None) -> str:
    """The engine's own training section: how the part was graded and its verdict, nothing measured
    (its Markdown version shows nothing, the verdict being in the parts table already).

    Args:
        training: `extras["training"]`, or None.

    Returns:
        A <section> element, or "" without a training run.
    """
    if not training:
        return ""
    lines = []
    if isinstance(training.get("method"), str):
        lines.append(f"<p>{escape_html(training['method'])}</p>")
    if training.get("message"):
        lines.append(f'<p class="note">{escape_html(training["message"])}</p>')
    title = f"<h2>{t('report.training_run')}</h2>"
    return f'<section id="training">{title}{"".join(lines)}</section>'


def extra_sections(extras: Mapping[str, Any], view: ReportView | None = None) -> list[ReportSection]:
    """The sections a submission's extras add to its feedback, in order.

    Args:
        extras: `SubmissionResult.extras`.
        view: the graded assignment's `report_sections` hook (None: it has none).

    Returns:
        The assignment's sections, then the generic training section when the extras hold a
        training run that the assignment's sections do not draw.
    """
    sections = list(view(extras)) if view is not None else []
    if extras.get(TRAINING) and all(section.key != TRAINING for section in sections):
        sections.append(ReportSection(TRAINING, html=functools.partial(training_html, extras[TRAINING])))
    return sections
