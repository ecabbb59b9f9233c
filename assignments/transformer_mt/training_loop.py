"""The trusted side's drive of a training session: pauses, BLEU at each, its own budget and its own stop rules."""

# The worker trains and pauses; everything that decides how long the grader spends on a run is
# decided here, on the trusted side: the wall clock, the number of evaluations, and the stop rules
# (the bar reached, a hopeless run) applied to the BLEU this side measured. The worker applies the
# same rules to the BLEU it is told (mtkit.training), so an honest run ends there; a worker that
# does not (student code can patch anything inside it) is ended here at its next pause.

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from autograder.i18n import t
from autograder.progress import training_progress
from mtkit.recipe import Recipe, is_hopeless, recipe_from_profile

if TYPE_CHECKING:
    from autograder.sandbox import Worker
    from mtkit.dataset import PreparedData

# summary["stopped_by"] when the trusted side ended a run the worker went on with.
STOPPED_BY_GRADER = "grader"


class TrainingBudgetSpent(Exception):
    """The training part went past the trusted side's own budget (wall clock or evaluations)."""

    def __init__(self, seconds: float, evaluations: int) -> None:
        super().__init__(f"over the training part's budget ({seconds:g} s, {evaluations} evaluations)")
        self.seconds, self.evaluations = seconds, evaluations


def part_deadline_s(budget_s: float) -> float:
    """The wall-clock limit of the whole training loop, trusted evaluations included.

    The worker's own clock counts the pauses (the trusted evaluations) towards the profile's
    budget and stops at the first evaluation boundary past it; a segment between pauses is bounded
    by the request timeout (1.25 budget + 60 s). An honest run therefore ends within budget +
    one segment + the final evaluation; this leaves a margin above that.

    Args:
        budget_s: the profile's time_budget_s.
    Returns:
        seconds.
    """
    return 2.5 * budget_s + 120


def evaluation_allowance(hparams: dict[str, Any], train_lengths: list[int]) -> int:
    """The most pauses for evaluation an honest run of these hyperparameters makes (mtkit.training:
    per epoch, or every eval_every_steps steps from eval_start_step on, plus one at the end).

    The step count is bounded from above from the batching rules (mtkit.batching: a batch holds
    batch_size rows, or at least max_tokens // longest rows; each pool may end with a smaller one).

    Args:
        hparams: the run's hyperparameters (the recipe's fields).
        train_lengths: each training pair's padded length, max(len(src), len(tgt)).
    Returns:
        the number of trusted evaluations the loop allows (the final one not counted).
    """
    epochs = int(hparams.get("max_epochs", Recipe.max_epochs))
    every = int(hparams.get("eval_every_steps", Recipe.eval_every_steps))
    if every <= 0:
        return epochs + 1
    pairs = max(1, len(train_lengths))
    batch_size = int(hparams.get("batch_size") or 0)
    max_tokens = int(hparams.get("max_tokens") or 0)
    rows = batch_size if batch_size > 0 else pairs
    if max_tokens > 0:
        rows = min(rows, max(1, max_tokens // max(1, max(train_lengths, default=1))))
    pool = max(1, int(hparams.get("pool_size") or Recipe.pool_size))
    steps = epochs * (-(-pairs // rows) + -(-pairs // pool))
    max_steps = int(hparams.get("max_steps") or 0)
    if max_steps > 0:
        steps = min(steps, max_steps)
    start = max(int(hparams.get("eval_start_step", Recipe.eval_start_step)), 1)
    return max(0, steps - start) // every + 2


def pause_step(recipe: Recipe, pause_index: int, reported_step: Any) -> int:
    """The step the trusted side holds a pause to be at: no earlier than its place in the schedule.

    An honest worker pauses at eval_start_step (rounded up to a multiple of eval_every_steps),
    then every eval_every_steps steps, so the k-th pause (0-based) is at least at that step; a
    worker that reports a smaller step cannot postpone the stop rules.

    Args:
        recipe: the run's recipe.
        pause_index: how many pauses came before this one.
        reported_step: the step the worker reports (not believed below the schedule's).

    Returns:
        The step the stop rules are applied at.
    """
    every = recipe.eval_every_steps
    scheduled = 0
    if every > 0:
        first = -(-max(recipe.eval_start_step, 1) // every) * every  # the first multiple of `every` >= start
        scheduled = first + pause_index * every
    try:
        reported = int(reported_step)
    except (TypeError, ValueError):
        reported = 0
    return max(reported, scheduled)


def _stop_reason(recipe: Recipe, step: int, bleu: float, best: float | None, bar_bleu: float | None) -> str | None:
    """Why the run must end after this pause (mtkit.training's rules on trusted BLEU), or None."""
    if bar_bleu is not None and bleu >= bar_bleu:
        return "target"
    if is_hopeless(step, best, recipe):
        return "hopeless"
    return None


def train_and_evaluate(
    worker: Worker,
    session: int,
    hparams: dict[str, Any],
    data: PreparedData,
    timeout_s: float,
    budget_s: float,
    bar_bleu: float | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """Drive the worker's training: at every pause measure BLEU and report it back.

    Training stops at the first pause whose weights do not fit the reference architecture (no
    later step can earn points, see assignments.transformer_mt.training_eval). The trusted side
    bounds the whole loop itself (`part_deadline_s`, `evaluation_allowance`): a worker that
    pauses at once, again and again, cannot make it evaluate without end. It also applies the
    recipe's stop rules (the bar, `mtkit.recipe.is_hopeless`) to the BLEU it measured, at the
    step the schedule puts each pause at (`pause_step`): a worker that pauses again after such a
    pause is ended there, and its weights are scored as they stand. With `bar_bleu`, a
    pause first scores a fixed subset of the validation split and scores the whole split only
    when that estimate is not far below the bar (training_eval.ESTIMATE_GATE): a run far from the
    bar pays a fraction of an evaluation per pause. Only whole-split BLEU decides: the final
    weights are always scored on the whole split, and an estimate (below half the bar) cannot stop a run at the bar.

    Args:
        worker: the training worker.
        session: a TrainingSession's handle.
        hparams: the run's hyperparameters.
        data: the prepared corpus.
        timeout_s: limit of one training request.
        budget_s: the profile's time_budget_s.
        bar_bleu: the pass bar (None: every pause scores the whole split).

    Returns:
        (evaluation of the final weights with the test split, BLEU curve [{step, epochs, bleu}, with
        "estimate_of" (sentences scored) on the pauses that only scored the subset],
        training summary (with "stopped_by": "grader" when this side ended the run), or None when
        training was stopped because the weights do not fit).

    Raises:
        TrainingBudgetSpent: the loop went past its wall-clock limit or evaluation count.
    """
    from assignments.transformer_mt.training_eval import NOT_FITTED, evaluate_weights

    train = data.splits["train"]
    allowed = evaluation_allowance(hparams, [max(len(s), len(t)) for s, t in zip(train.src, train.tgt, strict=True)])
    recipe = recipe_from_profile(hparams)
    limit_s = part_deadline_s(budget_s)
    began = time.monotonic()
    deadline = began + limit_s

    def remaining_s() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TrainingBudgetSpent(limit_s, allowed)
        return left

    curve: list[dict[str, Any]] = []
    best: float | None = None
    ended: str | None = None  # the trusted side's stop reason at the last pause
    while True:
        event = worker.run(session, "forward", [], mode="train", timeout_s=min(timeout_s, remaining_s()))
        if event["done"]:
            break
        if ended is not None:  # the worker went on after a pause that ended the run: end it here
            event = {
                "step": event["step"],
                "epochs": event["epochs"],
                "stop_reason": ended,
                "stopped_by": STOPPED_BY_GRADER,
                "wall_s": round(time.monotonic() - began, 1),
                "history": json.dumps({"losses": [], "evals": []}),  # the worker's log is not asked for
            }
            break
        if len(curve) >= allowed:
            raise TrainingBudgetSpent(limit_s, allowed)
        remaining_s()
        measured = evaluate_weights(worker, session, hparams, data, gate_bar=bar_bleu, teacher_forced=False)
        point = {"step": event["step"], "epochs": event["epochs"], "bleu": measured["bleu"]}
        if measured.get("estimate"):
            point["estimate_of"] = measured["n_sentences"]
        step = pause_step(recipe, len(curve), event["step"])
        curve.append(point)
        shown = {"bleu": float(measured["bleu"]), "n": measured["n_sentences"]}
        training_progress(
            event["step"], t(f"training.progress.{'estimate' if 'estimate_of' in point else 'whole_split'}", **shown)
        )
        if measured["evaluated_by"] == NOT_FITTED:
            return measured, curve, None
        bleu = float(measured["bleu"])
        best = bleu if best is None else max(best, bleu)
        ended = _stop_reason(recipe, step, bleu if "estimate_of" not in point else 0.0, best, bar_bleu)
        worker.run(session, "report_bleu", [bleu], mode="train", timeout_s=min(timeout_s, remaining_s()))
    remaining_s()
    final = evaluate_weights(worker, session, hparams, data, with_test=True)
    if curve and curve[-1]["step"] == event["step"] and "estimate_of" in curve[-1]:
        curve.pop()  # the whole split has now scored these weights
    if not (curve and curve[-1]["step"] == event["step"]):  # else the last pause measured these weights
        curve.append({"step": event["step"], "epochs": event["epochs"], "bleu": final["bleu"]})
    return final, curve, event
