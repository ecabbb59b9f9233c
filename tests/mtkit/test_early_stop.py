"""The early stop of hopeless training runs: never on a recorded run that passed, always on the copy cheat."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from assignments.transformer_mt.settings import training_settings
from autograder.config import load_config
from mtkit.training import Recipe, is_hopeless, recipe_from_profile, train

# Curves in groups by batch size: a step means a batch, so a profile's step rules are replayed
# against the curves recorded with its batch size only.
CURVE_GROUPS = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "fixtures" / "training" / "recorded_bleu_curves.yml").read_text(
        encoding="utf-8"
    )
)
CONFIG = load_config()
THRESHOLD = training_settings(CONFIG).threshold_bleu
TRAIN_PAIRS = 29_000  # Multi30k's training split: one epoch is ceil(TRAIN_PAIRS / batch_size) steps


def profile_recipe(profile: str) -> Recipe:
    return recipe_from_profile(training_settings(CONFIG).profile_hparams(profile))


def curves_for(recipe: Recipe) -> dict[str, dict]:
    return CURVE_GROUPS[f"batch_{recipe.batch_size}"]


def curve_with_role(recipe: Recipe, role: str) -> dict[int, float]:
    return next(run["curve"] for run in curves_for(recipe).values() if run.get("role") == role)


def replay(curve: dict[int, float], recipe: Recipe) -> str:
    """What the training loop decides along a recorded curve: "target", "hopeless" or "end"."""
    best = None
    for step, bleu in sorted(curve.items()):
        best = bleu if best is None else max(best, bleu)
        if bleu >= THRESHOLD:
            return "target"
        if is_hopeless(step, best, recipe):
            return "hopeless"
    return "end"


def schedule_end(recipe: Recipe) -> float:
    """The step after which a profile's run cannot change its model (linear/cosine reach lr 0 there)."""
    if recipe.lr_schedule not in ("linear", "cosine"):
        return float("inf")
    # lr_decay_steps 0: the decay spans the whole run, max_epochs of the profile's batches
    return recipe.lr_decay_steps or recipe.max_epochs * math.ceil(TRAIN_PAIRS / recipe.batch_size)


def first_pass(curve: dict[int, float]) -> int:
    return min(step for step, bleu in curve.items() if bleu >= THRESHOLD)


def test_every_profile_has_curves_of_its_batch_size() -> None:
    for profile in ("cpu", "gpu"):
        passing = [run for run in curves_for(profile_recipe(profile)).values() if run["passes"]]
        assert len(passing) >= 3, profile


PASSING_RUNS = [
    (profile, name)
    for profile in ("cpu", "gpu")
    for name, run in curves_for(profile_recipe(profile)).items()
    if run["passes"]
]


@pytest.mark.parametrize(("profile", "name"), PASSING_RUNS)
def test_no_recorded_run_that_passed_is_stopped(profile: str, name: str) -> None:
    recipe = profile_recipe(profile)
    assert recipe.hopeless_bleu > 0 and recipe.hopeless_after_steps > 0  # the rule is on
    curve = curves_for(recipe)[name]["curve"]
    if first_pass(curve) > schedule_end(recipe):
        # It passed only after this profile's schedule ends (e.g. the batch-128 d=128 prototype at
        # step 1,362): under this profile it cannot pass at all.
        pytest.skip(f"passed at step {first_pass(curve)}, after the {profile} profile's schedule ends")
    assert replay(curve, recipe) == "target"


def test_the_cpu_rule_keeps_a_wide_margin_under_every_passing_run() -> None:
    recipe = profile_recipe("cpu")
    for name, run in curves_for(recipe).items():
        if run["passes"]:  # the first recorded evaluation at or after the rule's step
            step = min(s for s in run["curve"] if s >= recipe.hopeless_after_steps)
            best = max(b for s, b in run["curve"].items() if s <= step)
            assert best >= 2 * recipe.hopeless_bleu, name


def test_the_run_that_copies_the_target_is_stopped_at_the_first_evaluation_past_the_rule() -> None:
    recipe = profile_recipe("cpu")
    assert replay(curve_with_role(recipe, "copies_the_next_token"), recipe) == "hopeless"
    # The rule's step is on the profile's evaluation schedule, so such a run stops right there.
    schedule = range(recipe.eval_start_step, int(schedule_end(recipe)) + 1, recipe.eval_every_steps)
    assert next(s for s in schedule if is_hopeless(s, 0.0, recipe)) == recipe.hopeless_after_steps


def test_the_late_floor_lies_under_every_passing_run_that_reaches_it() -> None:
    recipe = profile_recipe("cpu")
    assert recipe.late_hopeless_after_steps > recipe.hopeless_after_steps > 0
    assert recipe.late_hopeless_bleu > recipe.hopeless_bleu
    checked = 0
    for name, run in curves_for(recipe).items():
        curve = run["curve"]
        if not run["passes"] or first_pass(curve) > schedule_end(recipe):
            continue
        late = [s for s in curve if s >= recipe.late_hopeless_after_steps]
        if late:  # its best at its first evaluation from the late step on, before or at its pass
            best = max(b for s, b in curve.items() if s <= min(late))
            assert best >= 1.2 * recipe.late_hopeless_bleu, name
            checked += 1
    assert checked >= 1


def test_the_run_that_never_learns_to_stop_is_stopped_by_the_late_floor() -> None:
    recipe = profile_recipe("cpu")
    curve = curve_with_role(recipe, "never_emits_eos")
    assert replay(curve, recipe) == "hopeless"
    stopped = next(s for s in sorted(curve) if is_hopeless(s, max(b for t, b in curve.items() if t <= s), recipe))
    assert stopped == recipe.late_hopeless_after_steps


def test_the_rule_is_off_without_both_keys():
    assert not is_hopeless(10_000, 0.0, Recipe())
    assert not is_hopeless(10_000, 0.0, Recipe(late_hopeless_bleu=0.15))
    assert not is_hopeless(10_000, 0.0, Recipe(late_hopeless_after_steps=300))
    assert is_hopeless(300, 0.1, Recipe(late_hopeless_bleu=0.15, late_hopeless_after_steps=300))
    assert not is_hopeless(290, 0.1, Recipe(late_hopeless_bleu=0.15, late_hopeless_after_steps=300))
    assert not is_hopeless(10_000, 0.0, Recipe(hopeless_bleu=0.05))
    assert not is_hopeless(10_000, 0.0, Recipe(hopeless_after_steps=10))
    assert not is_hopeless(10_000, None, Recipe(hopeless_bleu=0.05, hopeless_after_steps=10))
    assert not is_hopeless(9, 0.0, Recipe(hopeless_bleu=0.05, hopeless_after_steps=10))
    assert is_hopeless(10, 0.049, Recipe(hopeless_bleu=0.05, hopeless_after_steps=10))
    assert not is_hopeless(10, 0.05, Recipe(hopeless_bleu=0.05, hopeless_after_steps=10))


def test_training_stops_as_hopeless_and_not_when_bleu_is_above_the_bar(small_data_run):
    stopped = small_data_run(lambda model: 0.0)
    assert stopped.stop_reason == "hopeless" and stopped.steps == 6
    assert [e["step"] for e in stopped.history["evals"]] == [4, 6]
    kept = small_data_run(lambda model: 0.1)
    assert kept.stop_reason == "max_epochs" and kept.steps == 12


@pytest.fixture
def small_data_run(tmp_path):
    from torch import nn

    from assignments.transformer_mt.reference.loss import calculate_loss
    from assignments.transformer_mt.reference.masks import (
        create_look_ahead_mask_for_attention,
        create_padding_mask_for_attention,
    )
    from assignments.transformer_mt.reference.model import Transformer
    from mtkit.constants import PAD_IDX
    from mtkit.dataset import prepare_data
    from mtkit.training import seed_everything

    data = prepare_data(
        Path(__file__).resolve().parents[1] / "fixtures" / "multi30k_small",
        cache_dir=tmp_path,
        expected_counts={"train": 30, "validation": 6, "test": 5},
    )
    criterion = nn.CrossEntropyLoss(reduction="none")

    def run(evaluate):
        seed_everything(0)
        model = Transformer({k: len(v) for k, v in data.vocabs.items()}, data.max_length, 16, 32, 2, 1, 0.0)
        recipe = Recipe(
            batch_size=8,
            max_epochs=3,
            eval_every_steps=2,
            eval_start_step=4,
            hopeless_bleu=0.05,
            hopeless_after_steps=6,
            target_bleu=0.2,
        )
        return train(
            model,
            data.splits["train"],
            recipe,
            device="cpu",
            progress=False,
            evaluate=evaluate,
            src_mask_fn=lambda src: create_padding_mask_for_attention(src, PAD_IDX),
            tgt_mask_fn=lambda tgt: create_look_ahead_mask_for_attention(tgt, PAD_IDX),
            loss_fn=lambda logits, tgt: calculate_loss(logits, tgt, criterion),
        )

    return run
