"""The training loop's own budget: a worker that pauses at once cannot make the trusted side evaluate without end."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from assignments.transformer_mt import training_eval, training_modes
from assignments.transformer_mt.training_modes import (
    TrainingBudgetSpent,
    evaluation_allowance,
    part_deadline_s,
    train_and_evaluate,
)
from autograder.assignment import load_assignment
from autograder.engine import grade_submission as engine_grade_submission
from autograder.i18n import use_language

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
    monkeypatch.setattr(training_modes, "part_deadline_s", lambda budget_s: 0.3)
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
    assert "4 validation evaluations" in part.checks[0].message  # the cpu profile's 3 epochs + 1
    assert time.monotonic() - began < part_deadline_s(300)
