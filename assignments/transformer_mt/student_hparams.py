"""The notebook's hyperparameter cell: read it in the worker and check it against grader.yml's bounds.

Used by the training modes that honour the student's choices: `student_hparams` (the grader trains
with them) and `checkpoint` (the model sizes the submitted weights were trained with). Names the
notebook does not set keep the profile's value, and the report says which values came from where.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from autograder.sandbox import Global, Worker

if TYPE_CHECKING:
    from assignments.transformer_mt.settings import HparamBounds

# The template's hyperparameter cell, in its order. `epochs` is the profile's max_epochs.
CELL_NAMES = (
    "embedding_dim",
    "feed_forward_dim",
    "num_layers",
    "num_heads",
    "batch_size",
    "drop_prob",
    "learning_rate",
    "epochs",
)
MODEL_NAMES = ("embedding_dim", "feed_forward_dim", "num_layers", "num_heads", "drop_prob")
INTEGER_NAMES = frozenset({"embedding_dim", "feed_forward_dim", "num_layers", "num_heads", "batch_size", "epochs"})
PROFILE_KEY = {"epochs": "max_epochs"}
FROM_NOTEBOOK, FROM_PROFILE = "your notebook", "the grader's profile"
DESCRIBE = "mtkit.worker_hparams:describe_values"


@dataclass
class CellSettings:
    """The hyperparameters a run uses, where each came from, and why they cannot be used (if so)."""

    hparams: dict[str, Any]
    values: dict[str, int | float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    problem: str | None = None

    def summary(self) -> str:
        """Returns: 'embedding_dim 256, ... (your notebook)'-style text, grouped by source."""
        groups = []
        for source in (FROM_NOTEBOOK, FROM_PROFILE):
            names = [n for n in self.values if self.sources[n] == source]
            if names:
                groups.append(", ".join(f"{n} {self.values[n]:g}" for n in names) + f" ({source})")
        return "; ".join(groups)


def read_cell(worker: Worker, names: tuple[str, ...], timeout_s: float | None = None) -> dict[str, dict[str, Any]]:
    """The values the notebook binds to `names` (the last binding wins, as in the notebook).

    Args:
        worker: a worker holding the submission.
        names: hyperparameter names to read; names the notebook does not define are left out.
        timeout_s: limit of the request (a student object's repr runs there); None: the worker's.

    Returns:
        name -> {"kind": "int" | "float" | "other", "value", "text"}; a malformed reply item
        (the worker is untrusted) reads as kind "other".
    """
    defined = [name for name in names if worker.has(name)]
    if not defined:
        return {}
    reply = worker.call(DESCRIBE, [], kwargs={name: Global(name) for name in defined}, timeout_s=timeout_s)
    described = {}
    for name in defined:
        item = reply.get(name) if isinstance(reply, dict) else None
        item = item if isinstance(item, dict) else {}
        kind, value = item.get("kind"), item.get("value")
        plausible = (kind == "int" and type(value) is int) or (kind == "float" and type(value) in (int, float))
        kind, value = (kind, value) if plausible else ("other", None)
        text = item.get("text")
        described[name] = {"kind": kind, "value": value, "text": text[:60] if isinstance(text, str) else "?"}
    return described


def _out_of_bounds(name: str, item: dict[str, Any], bounds: list[float]) -> str | None:
    low, high = bounds
    wanted = "an integer" if name in INTEGER_NAMES else "a number"
    in_range = f"from {low:g} to {high:g}"
    if item["kind"] == "other" or (name in INTEGER_NAMES and item["kind"] != "int"):
        return f"`{name} = {item['text']}` must be {wanted} {in_range}"
    if not low <= item["value"] <= high:
        return f"`{name} = {item['text']}` is outside the range this course allows ({in_range})"
    return None


def apply_cell(
    profile: dict[str, Any], described: dict[str, dict[str, Any]], bounds: HparamBounds, names: tuple[str, ...]
) -> CellSettings:
    """Put the notebook's values in place of the profile's, after checking them.

    Args:
        profile: the training profile (model sizes and recipe).
        described: `read_cell`'s answer.
        bounds: grader.yml's training.hparam_bounds.
        names: the names this mode takes from the notebook.

    Returns:
        The settings; `problem` is a student-facing sentence when a value cannot be used (the
        run must not start then).
    """
    hparams = dict(profile)
    settings = CellSettings(hparams)
    problems = []
    for name in names:
        key = PROFILE_KEY.get(name, name)
        item = described.get(name)
        if item is None:
            settings.values[name], settings.sources[name] = profile[key], FROM_PROFILE
            continue
        problem = _out_of_bounds(name, item, getattr(bounds, name))  # [min, max]
        if problem:
            problems.append(problem)
            continue
        value = int(item["value"]) if name in INTEGER_NAMES else float(item["value"])
        hparams[key] = value
        settings.values[name], settings.sources[name] = value, FROM_NOTEBOOK
    if not problems and hparams["embedding_dim"] % hparams["num_heads"]:
        problems.append(
            f"`num_heads = {hparams['num_heads']}` must divide `embedding_dim = {hparams['embedding_dim']}`"
        )
    if problems:
        settings.problem = (
            "Your hyperparameter cell cannot be used: " + "; ".join(problems) + ". Change it and submit again."
        )
    return settings


def student_recipe(settings: CellSettings) -> dict[str, Any]:
    """The profile to train with in student_hparams mode.

    The notebook's values replace the profile's; the profile keeps the rest of the recipe
    (warm-up, schedule shape, label smoothing, clipping, evaluation points, time budget). A
    decaying schedule is stretched over the student's epochs instead of the profile's fixed length.

    Returns:
        A profile mapping for `recipe_from_profile`.
    """
    hparams = dict(settings.hparams)
    if hparams["lr_schedule"] in ("linear", "cosine") and settings.sources.get("epochs") == FROM_NOTEBOOK:
        hparams["lr_decay_steps"] = 0  # 0 = decay over the whole run (max_epochs)
    return hparams
