"""The training loop's own budget: a worker that pauses at once cannot make the trusted side evaluate without end."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from assignments.transformer_mt import training_eval, training_loop, training_modes
from assignments.transformer_mt.settings import training_settings
from assignments.transformer_mt.training_loop import (
    TrainingBudgetSpent,
    evaluation_allowance,
    part_deadline_s,
    pause_step,
    train_and_evaluate,
)
from autograder.assignment import load_assignment
from autograder.engine import grade_submission as engine_grade_submission
from autograder.i18n import use_language
from mtkit.recipe import Recipe, recipe_from_profile

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

PAIRS = SimpleNamespace(src=[[1, 5, 2]] * 100, tgt=[[1, 6, 7, 2]] * 100)
DATA: Any = SimpleNamespace(splits={"train": PAIRS})  # the one field the loop reads of PreparedData
PART2_MESSAGES = Path(training_modes.__file__).parent / "messages"


class PausingWorker:
    """A training worker whose session reports a pause at once, every time (the attack)."""

    def __init__(self) -> None:
        self.forwards = 0

    def run(self, session: int, method: str, args: list[Any], **_: Any) -> Any:
        if method == "forward":
            self.forwards += 1
            return {"done": False, "step": 0, "epochs": 0.0}
        return True


class SteppingWorker:
    """A training worker that pauses every 10 steps from step 200 and reports `reported_step`.

    `obeys`: whether it ends (done) after the trusted side's BLEU makes the run hopeless, as
    mtkit.training does; a worker whose copy of the rule was patched goes on pausing.
    """

    def __init__(self, obeys: bool, honest_steps: bool = True) -> None:
        self.obeys, self.honest_steps = obeys, honest_steps
        self.step, self.forwards, self.reported = 190, 0, [0.0]

    def run(self, session: int, method: str, args: list[Any], **_: Any) -> Any:
        if method == "report_bleu":
            self.reported.append(args[0])
            return True
        self.forwards += 1
        recipe = recipe_from_profile(CPU_RULES)
        if self.obeys and self.step >= recipe.hopeless_after_steps and max(self.reported) < recipe.hopeless_bleu:
            history = json.dumps({"losses": [], "evals": []})
            return {
                "done": True,
                "step": self.step,
                "epochs": 1.0,
                "stop_reason": "hopeless",
                "wall_s": 1.0,
                "history": history,
            }
        self.step += 10
        return {"done": False, "step": self.step if self.honest_steps else 1, "epochs": self.step / 227}


# A profile's schedule and early-stop keys as the trusted loop reads them (the values of the batch-128
# cpu profile grader.yml had until 2026-12-04: pauses every 10 steps, hopeless from step 240).
CPU_RULES: dict[str, Any] = {
    "max_epochs": 3,
    "batch_size": 128,
    "eval_every_steps": 10,
    "eval_start_step": 200,
    "hopeless_bleu": 0.05,
    "hopeless_after_steps": 240,
}
BIG_DATA: Any = SimpleNamespace(splits={"train": SimpleNamespace(src=[[1, 5, 2]] * 29_000, tgt=[[1, 6, 2]] * 29_000)})


def zero_bleu(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return {"bleu": 0.0, "evaluated_by": "x", "n_sentences": 1014}


@pytest.mark.parametrize("honest_steps", [True, False])
def test_the_trusted_side_ends_a_hopeless_run_the_worker_goes_on_with(
    monkeypatch: pytest.MonkeyPatch, honest_steps: bool
) -> None:
    monkeypatch.setattr(training_eval, "evaluate_weights", zero_bleu)
    worker = SteppingWorker(obeys=False, honest_steps=honest_steps)
    with use_language("ko", PART2_MESSAGES):
        _, curve, summary = train_and_evaluate(cast(Any, worker), 1, CPU_RULES, BIG_DATA, timeout_s=60, budget_s=900)
    # Pauses at 200..240 (the fifth is hopeless), then the worker's next pause is refused.
    assert summary is not None
    assert (summary["stop_reason"], summary["stopped_by"]) == ("hopeless", "grader")
    assert len(worker.reported) - 1 == 5 and worker.forwards == 6
    # Five pauses, then the final weights (a point of their own when their reported step is new).
    assert len(curve) == (6 if honest_steps else 5)


def test_an_honest_worker_ends_the_run_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training_eval, "evaluate_weights", zero_bleu)
    worker = SteppingWorker(obeys=True)
    with use_language("ko", PART2_MESSAGES):
        _, curve, summary = train_and_evaluate(cast(Any, worker), 1, CPU_RULES, BIG_DATA, timeout_s=60, budget_s=900)
    assert summary is not None and summary["stop_reason"] == "hopeless" and "stopped_by" not in summary
    assert worker.forwards == 6 and [p["step"] for p in curve] == [200, 210, 220, 230, 240]


def test_only_the_final_weights_get_the_teacher_forced_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bool] = []

    def recorded(*args: Any, **kwargs: Any) -> dict[str, Any]:
        asked.append(kwargs.get("teacher_forced", True))  # evaluate_weights adds it by default
        return zero_bleu()

    monkeypatch.setattr(training_eval, "evaluate_weights", recorded)
    with use_language("ko", PART2_MESSAGES):
        train_and_evaluate(cast(Any, SteppingWorker(obeys=True)), 1, CPU_RULES, BIG_DATA, timeout_s=60, budget_s=900)
    # A forward pass over the whole split per pause would cost more than the pause's decoding.
    assert asked == [False] * 5 + [True]


def test_a_pause_is_held_at_its_place_in_the_schedule_at_least() -> None:
    recipe = recipe_from_profile(CPU_RULES)
    assert [pause_step(recipe, k, 200 + 10 * k) for k in range(3)] == [200, 210, 220]
    assert pause_step(recipe, 4, 0) == 240 and pause_step(recipe, 4, "x") == 240
    assert pause_step(recipe, 0, 235) == 235  # a later step reported counts as it is
    assert pause_step(Recipe(eval_every_steps=25, eval_start_step=130), 0, 0) == 150
    assert pause_step(Recipe(eval_every_steps=0), 3, 7) == 7  # per-epoch pauses: the reported step


def test_allowance_follows_the_recipe() -> None:
    lengths = [4] * 100
    assert evaluation_allowance({"max_epochs": 3, "eval_every_steps": 0}, lengths) == 4
    # 100 pairs in batches of 10, one pool: at most 11 steps an epoch, 2 epochs; every 5 steps from 1
    hparams = {"max_epochs": 2, "eval_every_steps": 5, "eval_start_step": 0, "batch_size": 10, "pool_size": 100}
    assert evaluation_allowance(hparams, lengths) == (22 - 1) // 5 + 2
    assert evaluation_allowance({**hparams, "max_steps": 6}, lengths) == (6 - 1) // 5 + 2


def test_the_evaluation_count_stops_a_worker_that_pauses_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluations: list[int] = []

    def counted_evaluation(*args: Any, **kwargs: Any) -> dict[str, Any]:
        evaluations.append(1)
        return {"bleu": 0.0, "evaluated_by": "x", "n_sentences": 1}

    monkeypatch.setattr(training_eval, "evaluate_weights", counted_evaluation)
    worker: Any = PausingWorker()
    # The progress lines come from the assignment's catalogue, as inside the engine.
    with use_language("ko", PART2_MESSAGES), pytest.raises(TrainingBudgetSpent) as spent:
        train_and_evaluate(worker, 1, {"max_epochs": 3, "eval_every_steps": 0}, DATA, timeout_s=60, budget_s=30)
    assert spent.value.evaluations == 4 and len(evaluations) == 4 and worker.forwards == 5


def test_the_wall_clock_stops_it_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_evaluation(*args: Any, **kwargs: Any) -> dict[str, Any]:
        time.sleep(0.05)
        return {"bleu": 0.0, "evaluated_by": "x", "n_sentences": 1}

    monkeypatch.setattr(training_eval, "evaluate_weights", slow_evaluation)
    monkeypatch.setattr(training_loop, "part_deadline_s", lambda budget_s: 0.3)
    hparams = {"max_epochs": 1000, "eval_every_steps": 0}  # an allowance the clock runs out first
    began = time.monotonic()
    with use_language("ko", PART2_MESSAGES), pytest.raises(TrainingBudgetSpent) as spent:
        train_and_evaluate(cast(Any, PausingWorker()), 1, hparams, DATA, timeout_s=60, budget_s=30)
    assert spent.value.seconds == 0.3
    assert time.monotonic() - began < 0.3 + 5  # one evaluation past the limit at most (generous under load)


def test_an_honest_profile_has_room() -> None:
    assert part_deadline_s(900) > 900 * 2.25 + 60  # budget + one request's timeout + the final evaluation


@pytest.mark.e2e
def test_the_attack_through_the_engine(tiny_training_config, notebook_variant) -> None:
    config = tiny_training_config("recipe", **{"feedback.language": "en"})
    began = time.monotonic()
    result = grade_submission(notebook_variant("pauses_at_once"), config, parts=["training"])
    part = next(p for p in result.parts if p.part == "training")
    assert part.points == 0
    assert "went past the grader's own limit" in part.checks[0].message, part.checks[0].message
    # The tiny profile evaluates once at the end (eval_every_steps 0): one evaluation per epoch of the
    # cpu profile's max_epochs, and one more.
    epochs = training_settings(config).profile_hparams("cpu")["max_epochs"]
    assert f"{epochs + 1} validation evaluations" in part.checks[0].message
    assert time.monotonic() - began < part_deadline_s(300)


# The tiny profile with a pause every 2 steps and a floor no tiny model reaches by step 4.
EARLY_STOP_AT_4 = {
    "training.profiles.cpu.eval_every_steps": 2,
    "training.profiles.cpu.eval_start_step": 2,
    "training.profiles.cpu.hopeless_bleu": 0.9,
    "training.profiles.cpu.hopeless_after_steps": 4,
}


@pytest.mark.e2e
@pytest.mark.parametrize("variant", ["ignores_early_stop", None])
def test_the_early_stop_holds_when_the_worker_ignores_it(tiny_training_config, notebook_variant, variant) -> None:
    config = tiny_training_config("recipe", **EARLY_STOP_AT_4)
    notebook = notebook_variant(variant) if variant else notebook_variant()
    result = grade_submission(notebook, config, parts=["training"])
    training = result.extras["training"]
    assert training["training"]["stop_reason"] == "hopeless"
    curve_steps = [point["step"] for point in training["bleu_curve"]]
    if variant:  # the worker paused again at step 6; the trusted side ended the run there
        assert training["training"]["stopped_by"] == "grader" and curve_steps == [2, 4, 6]
    else:  # the worker's own rule ended it at step 4 (the control: the same rule, not patched)
        assert "stopped_by" not in training["training"] and curve_steps == [2, 4]
