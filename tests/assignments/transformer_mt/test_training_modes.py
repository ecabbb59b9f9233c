"""The training part's other modes: the notebook's own hyperparameters, and a submitted checkpoint."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import pytest
import torch

from assignments.transformer_mt.reference.evaluate import evaluate_model
from assignments.transformer_mt.reference.model import Transformer
from assignments.transformer_mt.reference.train import build_model
from assignments.transformer_mt.settings import training_settings
from assignments.transformer_mt.training_eval import load_data
from autograder.assignment import load_assignment
from autograder.config import GraderConfig, load_config
from autograder.engine import grade_submission as engine_grade_submission
from autograder.results import SubmissionResult
from mtkit.training import save_checkpoint

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

# The model sizes of tests/fixtures/training/variants.yml's tiny_hyperparameters.
ENGLISH = {"feedback.language": "en"}
TINY_SIZES = {"embedding_dim": 48, "feed_forward_dim": 96, "num_heads": 4, "num_layers": 1, "drop_prob": 0.0}
# Each test trains (or loads) a tiny model through the engine: tens of seconds, so end to end.
pytestmark = pytest.mark.e2e


def _part(result: SubmissionResult) -> tuple[float, str, dict]:
    part = next(p for p in result.parts if p.part == "training")
    assert not part.skipped
    return part.points, part.checks[0].message, result.extras.get("training", {})


def _reference_checkpoint(config: GraderConfig, path: Path, seed: int, sizes: dict = TINY_SIZES) -> Transformer:
    """A reference-architecture model with seeded random weights, saved as a checkpoint at `path`."""
    data = load_data(config)
    torch.manual_seed(seed)
    model = build_model(sizes, {lang: len(v) for lang, v in data.vocabs.items()}, data.max_length).eval()
    save_checkpoint(path, model, {"note": "test"})
    return model


def test_student_hparams_mode_trains_with_the_notebooks_cell(tiny_training_config, notebook_variant) -> None:
    result = grade_submission(
        notebook_variant("tiny_hyperparameters"), tiny_training_config("student_hparams", **ENGLISH), parts=["training"]
    )
    points, message, details = _part(result)
    used = {name: item["value"] for name, item in details["hyperparameters"].items()}
    assert used == {**TINY_SIZES, "batch_size": 32, "learning_rate": 3e-3, "epochs": 1}
    assert {item["source"] for item in details["hyperparameters"].values()} == {"your notebook"}
    # The recipe carries them: sizes, batch size, learning rate and epochs; the profile's cap of
    # 12 steps still applies, and the decay spans the student's epochs (lr_decay_steps 0).
    profile = details["profile"]
    assert (profile["embedding_dim"], profile["batch_size"], profile["max_epochs"]) == (48, 32, 1)
    assert profile["learning_rate"] == 3e-3 and profile["lr_decay_steps"] == 0
    assert details["training"]["step"] == 12 and details["training"]["stop_reason"] == "max_steps"
    assert details["evaluated_by"].startswith("reference architecture")
    assert "embedding_dim 48" in details["method"] and "`cpu` profile" in details["method"]
    assert points == 0 and "hyperparameters" in message  # 12 steps cannot reach 0.2


def test_student_hparams_mode_refuses_values_outside_the_bounds_without_training(
    tiny_training_config, notebook_variant
) -> None:
    points, message, details = _part(
        grade_submission(
            notebook_variant("oversized_hyperparameters"),
            tiny_training_config("student_hparams", **ENGLISH),
            parts=["training"],
        )
    )
    assert points == 0
    assert message.startswith("Training was skipped: Your hyperparameter cell cannot be used")
    assert "`embedding_dim = 4096` is outside the range this course allows (from 16 to 1024)" in message
    assert "`num_layers = 2.5` must be an integer from 1 to 6" in message
    assert "training" not in details and "evaluation" not in details  # nothing was trained


def test_student_hparams_mode_takes_what_the_cell_leaves_out_from_the_profile(
    tiny_training_config, notebook_variant
) -> None:
    config = tiny_training_config("student_hparams", **ENGLISH, **{"training.hparam_bounds.embedding_dim": [16, 128]})
    _points, message, details = _part(grade_submission(notebook_variant("no_epochs"), config, parts=["training"]))
    # embedding_dim 256 is now out of bounds: refused before any training, epochs from the profile.
    assert "`embedding_dim = 256` is outside the range this course allows (from 16 to 128)" in message
    assert details["hyperparameters"]["epochs"] == {
        "value": training_settings(config).profiles["cpu"].max_epochs,
        "source": "the grader's profile",
    }


def test_checkpoint_mode_evaluates_the_submitted_weights_on_the_trusted_side(
    tiny_training_config, notebook_variant
) -> None:
    config = tiny_training_config("checkpoint", **ENGLISH)
    notebook = notebook_variant("tiny_hyperparameters")
    model = _reference_checkpoint(config, notebook.parent / "checkpoint.pt", seed=3)
    points, message, details = _part(grade_submission(notebook, config, parts=["training"]))
    expected = evaluate_model(model, load_data(config))
    assert details["evaluated_by"].startswith("reference architecture")
    assert details["evaluation"]["bleu"] == expected["bleu"]
    assert details["evaluation"]["examples"] == expected["examples"]  # the very same translations
    assert details["checkpoint"]["file"] == "checkpoint.pt" and len(details["checkpoint"]["sha256"]) == 64
    assert "training" not in details and "history" not in details  # nothing was trained
    assert points == 0 and "vocabulary" in message  # random weights: BLEU ~ 0
    # Negative control: other weights, other translations.
    other = notebook_variant("tiny_hyperparameters", folder=notebook.parent.parent / "other")
    _reference_checkpoint(config, other.parent / "submission.pt", seed=4)
    assert (
        _part(grade_submission(other, config, parts=["training"]))[2]["evaluation"]["examples"] != expected["examples"]
    )


def test_checkpoint_mode_explains_a_missing_or_unusable_checkpoint(
    tiny_training_config, notebook_variant, tmp_path: Path
) -> None:
    config = tiny_training_config("checkpoint", **ENGLISH)
    notebook = notebook_variant("tiny_hyperparameters")
    points, message, _ = _part(grade_submission(notebook, config, parts=["training"]))
    assert points == 0 and message.startswith("Training part not graded: No checkpoint was found")
    assert "`submission.pt`" in message and "torch.save(model.state_dict()" in message

    # Sizes that differ from the cell's: the message names a tensor and both shapes.
    _reference_checkpoint(
        config,
        notebook.parent / "checkpoint.pt",
        seed=0,
        sizes={**TINY_SIZES, "embedding_dim": 64, "feed_forward_dim": 96},
    )
    points, message, _ = _part(grade_submission(notebook, config, parts=["training"]))
    assert points == 0 and "does not fit the model your notebook builds" in message
    assert "(64,) in the checkpoint but (48,) in your model" in message or ", 64) in the checkpoint but" in message

    # A pickled object instead of tensors: refused by the weights-only loader inside the worker.
    torch.save({"model": {"weight": _Payload()}}, notebook.parent / "checkpoint.pt")
    points, message, _ = _part(grade_submission(notebook, config, parts=["training"]))
    assert points == 0 and "could not be loaded as weights only" in message


class _Payload:
    """Not a tensor: torch.save pickles it as an object, which a weights-only load must refuse."""


def test_the_cli_sets_the_mode() -> None:
    from autograder.cli import build_parser, config_overrides

    args = build_parser().parse_args(["grade", "x.ipynb", "--set", "training.mode=checkpoint"])
    assert config_overrides(args)["training.mode"] == "checkpoint"
    assert training_settings(load_config(overrides=config_overrides(args))).mode == "checkpoint"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_trained_checkpoint_earns_the_training_points(reference_cpu_run, notebook_variant) -> None:
    """The reference trained with the cpu profile, submitted as a checkpoint with a correct notebook
    whose hyperparameter cell has that profile's sizes, passes without any training by the grader."""
    notebook = notebook_variant("cpu_profile_sizes")
    shutil.copyfile(reference_cpu_run / "checkpoint.pt", notebook.parent / "checkpoint.pt")
    config = load_config(overrides={"training.enabled": True, "training.profile": "cpu", "training.mode": "checkpoint"})
    points, _, details = _part(grade_submission(notebook, config, parts=["training"]))
    assert details["evaluated_by"].startswith("reference architecture")
    assert details["evaluation"]["bleu"] >= training_settings(config).threshold_bleu
    assert points == config.parts["training"].points
