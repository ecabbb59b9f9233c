"""BLEU forgery: a notebook that patches the worker's model session earns no training points in any mode.

The attack notebooks (tests/fixtures/attacks/, written by build_forged_bleu.py) embed the public
validation split as a lookup table and replace the worker's `logits`, `translate` and training
step. A grader that scored translations made inside the worker gave them BLEU 0.97 and 20/20 with
no training; the trusted side now only scores what it decodes itself with the reference
architecture, so weights whose logits do not match it earn nothing.
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import pytest
import torch

from assignments.transformer_mt.reference.train import build_model
from assignments.transformer_mt.training_eval import NOT_FITTED, load_data
from autograder.assignment import load_assignment
from autograder.engine import grade_submission as engine_grade_submission
from mtkit.training import save_checkpoint

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

ATTACKS = Path(__file__).resolve().parents[2] / "fixtures" / "attacks"
# The model sizes of the attack notebooks' hyperparameter cell (student_hparams, checkpoint).
TINY_SIZES = {"embedding_dim": 48, "feed_forward_dim": 96, "num_heads": 4, "num_layers": 1, "drop_prob": 0.0}
# Each test trains (or loads) a tiny model through the engine: tens of seconds, so end to end.
pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", ["recipe", "student_hparams", "checkpoint"])
def test_a_forged_session_earns_no_training_points(mode: str, tiny_training_config, tmp_path: Path) -> None:
    config = tiny_training_config(mode, **{"feedback.language": "en"})
    notebook = tmp_path / "submission.ipynb"
    shutil.copyfile(ATTACKS / f"forged_bleu_{mode}.ipynb", notebook)
    if mode == "checkpoint":  # weights that load into the student's model
        data = load_data(config)
        torch.manual_seed(0)
        save_checkpoint(
            tmp_path / "checkpoint.pt",
            build_model(TINY_SIZES, {k: len(v) for k, v in data.vocabs.items()}, data.max_length),
            {},
        )
    result = grade_submission(notebook, config, parts=["training"])
    part = next(p for p in result.parts if p.part == "training")
    details = result.extras["training"]
    assert part.points == 0 and not part.skipped
    assert details["evaluated_by"] == NOT_FITTED
    assert "evaluation" not in details and "training" not in details  # nothing scored, nothing trained
    message = part.checks[0].message
    assert message.startswith("No training points: the grader translates with the assignment's Transformer")
    # The forged logits have 3 classes: the message names both shapes.
    expected = tuple(details["not_fitted_detail"]["expected_shape"])
    assert f"where the architecture gives logits of shape {expected}" in message
    assert details["not_fitted_detail"]["student_output"] == str((*expected[:2], 3))
