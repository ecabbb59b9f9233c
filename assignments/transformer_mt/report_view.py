"""Part 2's sections of the feedback: the student's look-ahead mask as a picture, the training run's BLEU."""

# The engine's `Assignment.report_sections` hook: it turns the report extras this assignment writes
# (report_extras' "attention_mask", the training hook's details as "training") into finished HTML
# and Markdown, in the current feedback language (this assignment's catalogue). Student-derived
# strings go through the engine's escaping (escape_html, md_text), as in every other section.

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from assignments.transformer_mt.messages import t
from autograder.reports.figures import png_data_uri, pyplot, save_png
from autograder.reports.md_safe import md_text
from autograder.reports.sections import TRAINING, ReportSection, escape_html

MASK = "attention_mask"  # the extras entry of assignment.report_extras
OPEN_COLOUR = "#2b6cb0"  # may attend
BLOCKED_COLOUR = "#e2e8f0"  # blocked
WRONG_COLOUR = "#e53e3e"  # differs from the correct mask
OPEN, BLOCKED, WRONG_OPEN, WRONG_BLOCKED = "■", "·", "✗", "○"  # the Markdown grid's cells


def report_sections(extras: Mapping[str, Any]) -> list[ReportSection]:
    """The mask picture and the training run, when the extras hold them (Assignment.report_sections).

    Args:
        extras: a graded submission's report extras.

    Returns:
        The sections in the order shown: the mask, then the training run.
    """
    sections = []
    picture, training = extras.get(MASK), extras.get(TRAINING)
    if picture:
        sections.append(ReportSection(MASK, partial(attention_section, picture), partial(mask_markdown, picture)))
    if training:
        sections.append(
            ReportSection(TRAINING, partial(training_section, training), partial(training_markdown, training))
        )
    return sections


def attention_section(picture: Mapping[str, Any] | None) -> str:
    """The "what your attention mask lets each position see" section (a mask picture extra).

    Args:
        picture: `extras["attention_mask"]` (attention_view.collect_mask_picture), or None.

    Returns:
        HTML, or "" when no picture was collected.
    """
    if not picture:
        return ""
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
    image = png_data_uri(mask_figure_png(picture))
    return (
        f'<section id="attention"><h2>{t("report.mask.title")}</h2>{intro}{body}'
        f'<img alt="{t("report.mask.alt")}" src="{image}"></section>'
    )


def training_section(training: Mapping[str, Any] | None, threshold: float | None = None) -> str:
    """The training run section: BLEU against the bar and the loss/BLEU curve.

    Args:
        training: `extras["training"]`, or None.
        threshold: the BLEU bar when the extras carry none (the training hook writes grader.yml's
            training.threshold_bleu into them as "threshold_bleu").

    Returns:
        HTML, or "" when the submission was not trained.
    """
    if not training:
        return ""
    series = training_series(training)
    threshold = series["threshold"] if series["threshold"] is not None else threshold
    lines = []
    memorisation = training.get("memorisation")
    if isinstance(memorisation, Mapping) and memorisation.get("flagged"):
        detail = t(
            "report.memorised_detail",
            validation=memorisation["validation_bleu"],
            test=memorisation["test_bleu"],
            gap=memorisation["gap"],
            threshold=memorisation["threshold"],
        )
        banner = escape_html(t("report.memorised_banner"))
        lines.append(f'<div class="msg"><b>{banner}</b><br>{escape_html(detail)}</div>')
    if isinstance(training.get("method"), str):
        lines.append(f"<p>{escape_html(training['method'])}</p>")
    if series["final_bleu"] is not None:
        bar = t("report.training_bar_html", bar=threshold) if threshold is not None else ""
        lines.append(f"<p>{t('report.training_measured', bleu=series['final_bleu'], bar=html.escape(bar))}</p>")
    if training.get("message"):
        lines.append(f'<p class="note">{escape_html(training["message"])}</p>')
    png = training_figure_png(training, threshold)
    image = f'<img alt="{t("report.training_curve_alt")}" src="{png_data_uri(png)}">' if png else ""
    return (
        f'<section id="training"><h2>{t("report.training_run")}</h2>{"".join(lines)}{image}'
        f"{_translation_examples(training)}</section>"
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
        threshold: the BLEU bar when the extras carry none.

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


def _draw_grid(
    ax: Any,
    grid: Sequence[Sequence[int]],
    labels: Sequence[str],
    title: str,
    wrong: Sequence[Sequence[bool]] | None = None,
) -> None:
    from matplotlib.colors import ListedColormap

    size = len(grid)
    ax.imshow(grid, cmap=ListedColormap([BLOCKED_COLOUR, OPEN_COLOUR]), vmin=0, vmax=1)
    ax.set_xticks(range(size), labels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(size), labels, fontsize=8)
    ax.set_xticks([i - 0.5 for i in range(1, size)], minor=True)
    ax.set_yticks([i - 0.5 for i in range(1, size)], minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("key: the token looked at", fontsize=8)
    ax.set_ylabel("query: the position looking", fontsize=8)
    ax.set_title(title, fontsize=9)
    for i in range(size):
        for j in range(size):
            if wrong is not None and wrong[i][j]:
                ax.text(j, i, "x", ha="center", va="center", color=WRONG_COLOUR, fontsize=14, fontweight="bold")


def mask_figure_png(picture: Mapping[str, Any]) -> bytes:
    """Heatmaps of the student's mask next to the correct one, one row per example sentence.

    Args:
        picture: `extras["attention_mask"]` (attention_view.collect_mask_picture).

    Returns:
        PNG bytes. Without a usable student mask only the correct masks are drawn.
    """
    plt = pyplot()
    expected = picture["expected"]
    labels = picture["labels"]
    mask = picture.get("mask")
    columns = 2 if mask is not None else 1
    fig, axes = plt.subplots(len(expected), columns, figsize=(3.6 * columns + 0.6, 3.4 * len(expected)), squeeze=False)
    for row, correct in enumerate(expected):
        sentence = " ".join(labels[row])
        if mask is not None:
            wrong = [
                [a != b for a, b in zip(mine, right, strict=False)]
                for mine, right in zip(mask[row], correct, strict=False)
            ]
            _draw_grid(axes[row][0], mask[row], labels[row], f"Your mask, sentence {row + 1}", wrong)
        _draw_grid(axes[row][columns - 1], correct, labels[row], f"Correct mask, sentence {row + 1}")
        axes[row][0].annotate(sentence, (0, 1.16), xycoords="axes fraction", fontsize=8, color="#4a5568")
    wrong_shown = mask is not None and not picture.get("matches")
    fig.suptitle(
        "Blue = may attend, grey = blocked" + ("; red x = differs from correct" if wrong_shown else ""), fontsize=10
    )
    fig.tight_layout()
    return save_png(fig)


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


def training_figure_png(training: Mapping[str, Any], threshold: float | None = None) -> bytes | None:
    """The training loss curve with validation BLEU on a second axis.

    Args:
        training: `extras["training"]` (see `training_series`).
        threshold: the BLEU bar to draw as a dashed line (the extras' own value wins).

    Returns:
        PNG bytes, or None when there is nothing to plot.
    """
    series = training_series(training)
    if not series["loss"] and not series["bleu"]:
        return None
    threshold = series["threshold"] if series["threshold"] is not None else threshold
    plt = pyplot()
    fig, loss_ax = plt.subplots(figsize=(7.5, 3.6))
    if series["loss"]:
        xs, ys = zip(*series["loss"], strict=True)
        loss_ax.plot(xs, ys, color="#2b6cb0", label="training loss")
    loss_ax.set_xlabel(series["x_label"])
    loss_ax.set_ylabel("training loss", color="#2b6cb0")
    if series["bleu"] or threshold is not None:
        bleu_ax = loss_ax.twinx()
        if series["bleu"]:
            xs, ys = zip(*series["bleu"], strict=True)
            bleu_ax.plot(xs, ys, "o-", color="#c05621", label="validation BLEU")
        if threshold is not None:
            bleu_ax.axhline(threshold, color="#c05621", linestyle="--", linewidth=1)
        bleu_ax.set_ylabel("validation BLEU (greedy)", color="#c05621")
        bleu_ax.set_ylim(bottom=0)
    loss_ax.set_title("Training run", fontsize=10)
    fig.tight_layout()
    return save_png(fig)
