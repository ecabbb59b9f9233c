"""Part 2's sections of the feedback: the student's look-ahead mask as a picture, the training run's BLEU."""

# The engine's `Assignment.report_sections` hook: it turns the report extras this assignment writes
# (report_extras' "attention_mask", the training hook's details as "training") into finished HTML
# and Markdown, in the current feedback language (this assignment's catalogue). Student-derived
# strings go through the engine's escaping (escape_html, md_text), as in every other section.

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import partial
from typing import Any

from assignments.transformer_mt.messages import t
from assignments.transformer_mt.report_figures import mask_figure_svg, svg_data_uri, training_figure_svg
from autograder.assignment import TrainingFigures, reported_number
from autograder.reports.md_safe import md_text
from autograder.reports.sections import TRAINING, ReportSection, escape_html

MASK = "attention_mask"  # the extras entry of assignment.report_extras
OPEN, BLOCKED, WRONG_OPEN, WRONG_BLOCKED = "■", "·", "✗", "○"  # the Markdown grid's cells
# Stop reasons of a run that ended before its schedule did: at the bar, or given up as hopeless
# (mtkit.training and training_loop write them in the run's summary).
EARLY_STOP_REASONS = frozenset({"target", "hopeless"})


def report_sections(extras: Mapping[str, Any]) -> list[ReportSection]:
    """The mask picture and the training run, when the extras hold them (Assignment.report_sections).

    Args:
        extras: a graded submission's report extras.

    Returns:
        The sections in the order shown: the mask, then the training run.
    """
    writers = {MASK: (attention_section, mask_markdown), TRAINING: (training_section, training_markdown)}
    return [
        ReportSection(key, partial(page, extras[key]), partial(text, extras[key]))
        for key, (page, text) in writers.items()
        if extras.get(key)
    ]


def attention_section(picture: Mapping[str, Any]) -> str:
    """The "what your attention mask lets each position see" section (a mask picture extra).

    Args:
        picture: `extras["attention_mask"]` (attention_view.collect_mask_picture).

    Returns:
        HTML.
    """
    intro = f'<p class="note">{t("report.mask.intro", pad_idx=html.escape(str(picture.get("pad_idx"))))}</p>'
    body = ""
    if picture.get("error"):
        body = f'<div class="msg">{escape_html(picture["error"])}</div>'
    else:
        verdict = (
            f'<span class="badge pass">{t("report.mask.matches")}</span>'
            if picture.get("matches")
            else f'<span class="badge fail">{t("report.mask.differs")}</span>'
        )
        findings = "".join(f"<li>{escape_html(f)}</li>" for f in picture.get("findings", []))
        body = f"<p>{verdict}</p><ul>{findings}</ul>"
    image = svg_data_uri(mask_figure_svg(picture))
    return (
        f'<section id="attention"><h2>{t("report.mask.title")}</h2>{intro}{body}'
        f'<img alt="{t("report.mask.alt")}" src="{image}"></section>'
    )


def training_section(training: Mapping[str, Any]) -> str:
    """The training run section: BLEU against the bar and the loss/BLEU curve.

    Args:
        training: `extras["training"]` (the training hook writes grader.yml's training.threshold_bleu
            into it as "threshold_bleu").

    Returns:
        HTML.
    """
    series = training_series(training)
    threshold = series["threshold"]
    lines = []
    detail = _memorised_detail(training)
    if detail is not None:
        banner = escape_html(t("report.memorised_banner"))
        lines.append(f'<div class="msg"><b>{banner}</b><br>{escape_html(detail)}</div>')
    if isinstance(training.get("method"), str):
        lines.append(f"<p>{escape_html(training['method'])}</p>")
    if series["final_bleu"] is not None:
        bar = t("report.training_bar_html", bar=threshold) if threshold is not None else ""
        lines.append(f"<p>{t('report.training_measured', bleu=series['final_bleu'], bar=html.escape(bar))}</p>")
    if training.get("message"):
        lines.append(f'<p class="note">{escape_html(training["message"])}</p>')
    svg = training_figure_svg(series, threshold)
    image = f'<img alt="{t("report.training_curve_alt")}" src="{svg_data_uri(svg)}">' if svg else ""
    return (
        f'<section id="training"><h2>{t("report.training_run")}</h2>{"".join(lines)}{image}'
        f"{_translation_examples(training)}</section>"
    )


def _memorised_detail(training: Mapping[str, Any]) -> str | None:
    """Why the weights were held for review (training.memorisation_gap), or None when they were not."""
    memorisation = training.get("memorisation")
    if not (isinstance(memorisation, Mapping) and memorisation.get("flagged")):
        return None
    return t(
        "report.memorised_detail",
        validation=memorisation["validation_bleu"],
        test=memorisation["test_bleu"],
        gap=memorisation["gap"],
        threshold=memorisation["threshold"],
    )


def _translation_examples(training: Mapping[str, Any]) -> str:
    evaluation = training.get("evaluation")
    examples = evaluation.get("examples") if isinstance(evaluation, Mapping) else None
    if not examples:
        return ""
    rows = "".join(
        f"<tr><td>{escape_html(e.get('src', ''))}</td><td>{escape_html(e.get('ref', ''))}</td>"
        f"<td>{escape_html(e.get('hyp', ''))}</td></tr>"
        for e in examples
        if isinstance(e, Mapping)
    )
    return (
        f"<h3>{t('report.examples_title')}</h3><table><tr><th>{t('report.examples.source')}</th>"
        f"<th>{t('report.examples.reference')}</th><th>{t('report.examples.hypothesis')}</th></tr>"
        f"{rows}</table>"
    )


def mask_markdown(picture: Mapping[str, Any]) -> str:
    """The attention-mask picture as text grids (for places that show no images).

    Args:
        picture: `extras["attention_mask"]`.

    Returns:
        Markdown.
    """
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


def training_markdown(training: Mapping[str, Any]) -> str:
    """A few lines about the training run: BLEU, how it was measured, a memorisation flag.

    Args:
        training: `extras["training"]`.

    Returns:
        Markdown.
    """
    lines = []
    detail = _memorised_detail(training)
    if detail is not None:
        lines.append(f"> **{t('report.memorised_banner')}** " + md_text(detail))
    series = training_series(training)
    if series["final_bleu"] is not None:
        bar = series["threshold"]
        method = f" {md_text(training['method'])}" if isinstance(training.get("method"), str) else ""
        text = t("report.training_line", bleu=series["final_bleu"]) + (
            t("report.training_bar", bar=bar) if bar is not None else ""
        )
        lines.append(f"**{t('report.training_run')}:** {md_text(text)}.{method}")
    return "\n\n".join(lines) + "\n" if lines else ""


def training_series(training: Mapping[str, Any]) -> dict[str, Any]:
    """Normalise the training extras into plottable series.

    Accepts the engine's training extras (`{"history": {"losses": [{step, loss}], "evals":
    [{step, bleu}]}, "evaluation": {"bleu": x, ...}, "threshold_bleu": t}`, mtkit's history keys
    also at the top level) and the compact form `{"curve": [[epoch, loss], ...], "bleu": x}`.

    Args:
        training: `extras["training"]`.

    Returns:
        {"x_label", "loss": [(x, loss)], "bleu": [(x, bleu)], "final_bleu": float | None,
        "threshold": float | None}.
    """
    raw_history = training.get("history")
    history: Mapping[str, Any] = raw_history if isinstance(raw_history, Mapping) else training
    losses = [
        (float(e["step"]), float(e["loss"]))
        for e in history.get("losses", [])
        if isinstance(e, Mapping) and "step" in e and "loss" in e
    ]
    evals = [
        (float(e["step"]), float(e["bleu"]))
        for e in history.get("evals", [])
        if isinstance(e, Mapping) and "step" in e and "bleu" in e
    ]
    x_label = "step"
    if not losses and training.get("curve"):
        losses = [(float(x), float(y)) for x, y in training["curve"]]
        x_label = "epoch"
    raw_evaluation = training.get("evaluation")
    evaluation: Mapping[str, Any] = raw_evaluation if isinstance(raw_evaluation, Mapping) else {}
    final = evaluation.get("bleu", training.get("bleu", history.get("best_bleu")))
    if final is None and evals:
        final = max(bleu for _, bleu in evals)
    threshold = training.get("threshold_bleu", training.get("threshold"))
    return {
        "x_label": x_label,
        "loss": losses,
        "bleu": evals,
        "final_bleu": None if final is None else float(final),
        "threshold": None if threshold is None else float(threshold),
    }


def training_figures(training: Mapping[str, Any]) -> TrainingFigures:
    """The class view's figures of one graded run (Assignment.training_figures).

    Args:
        training: `extras["training"]`: the graded BLEU (`evaluation.bleu`, else `bleu`), the bar
            (`threshold_bleu`), the evaluations (`bleu_curve`, else `history.evals`), `steps`, and
            the run's summary (`training.stop_reason`).

    Returns:
        The run's BLEU, bar, curve of {step, bleu} points, steps and stop reason.
    """
    evaluation = training.get("evaluation")
    graded = evaluation if isinstance(evaluation, Mapping) and "bleu" in evaluation else training
    curve = training.get("bleu_curve")
    history = training.get("history")
    if not isinstance(curve, list) and isinstance(history, Mapping):
        curve = history.get("evals")
    points = None
    if isinstance(curve, list):  # a point without a BLEU never reaches the bar
        points = tuple(
            (float(point["step"]), float(point.get("bleu", -1.0)))
            for point in curve
            if isinstance(point, Mapping) and "step" in point
        )
    run = training.get("training")
    reason = str(run.get("stop_reason") or "") if isinstance(run, Mapping) else ""
    return TrainingFigures(
        metric="BLEU",
        value=reported_number(graded.get("bleu")),
        threshold=reported_number(training.get("threshold_bleu", training.get("threshold"))),
        curve=points,
        steps=reported_number(training.get("steps")),
        stop_reason=reason,
        stopped_early=reason in EARLY_STOP_REASONS,
    )
