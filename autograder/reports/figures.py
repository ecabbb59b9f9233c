"""Pictures for the feedback reports (matplotlib, Agg): attention-mask heatmaps and training curves."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

OPEN_COLOUR = "#2b6cb0"  # may attend
BLOCKED_COLOUR = "#e2e8f0"  # blocked
WRONG_COLOUR = "#e53e3e"  # differs from the correct mask


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display: graders and CI run headless
    import matplotlib.pyplot as plt

    return plt


def png_data_uri(png: bytes) -> str:
    """Encode PNG bytes as a `data:` URI for an <img> that works offline.

    Args:
        png: the image file's bytes.

    Returns:
        "data:image/png;base64,...".
    """
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _save(fig: Any) -> bytes:
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


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
        picture: `extras["attention_mask"]` as written by `autograder.attention_view`.

    Returns:
        PNG bytes. Without a usable student mask only the correct masks are drawn.
    """
    plt = _pyplot()
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
    return _save(fig)


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
    plt = _pyplot()
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
    return _save(fig)
