"""Training curves: loss per logged step window and validation BLEU per evaluation, as one PNG."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot_history(
    history: Mapping[str, Any], path: str | Path, title: str = "Training", target_bleu: float | None = None
) -> Path:
    """Draw the loss curve (left axis) and the BLEU points (right axis) against the step.

    Args:
        history: `TrainResult.history` (keys "losses" and "evals", as written by mtkit.training).
        path: the PNG to write (parent folders are created).
        title: figure title.
        target_bleu: draw this BLEU level as a dashed line.

    Returns:
        The path written.
    """
    import matplotlib

    matplotlib.use("Agg")  # no display: the grader and CI run headless
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    losses = history.get("losses", [])
    evals = history.get("evals", [])
    fig, loss_ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    loss_ax.plot([e["step"] for e in losses], [e["loss"] for e in losses], color="tab:blue", label="train loss")
    loss_ax.set_xlabel("step")
    loss_ax.set_ylabel("train loss (window mean)", color="tab:blue")
    bleu_ax = loss_ax.twinx()
    bleu_ax.plot(
        [e["step"] for e in evals], [e["bleu"] for e in evals], "o-", color="tab:red", label="validation BLEU (greedy)"
    )
    if target_bleu is not None:
        bleu_ax.axhline(target_bleu, color="tab:red", linestyle="--", linewidth=1)
    bleu_ax.set_ylabel("corpus BLEU (greedy, validation)", color="tab:red")
    bleu_ax.set_ylim(bottom=0)
    loss_ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
