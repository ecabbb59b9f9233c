"""Reading the notebook's hyperparameter cell in the worker and checking it against the bounds."""

from __future__ import annotations

import time

import pytest

from assignments.transformer_mt.settings import training_settings
from assignments.transformer_mt.student_hparams import (
    CELL_NAMES,
    FROM_NOTEBOOK,
    FROM_PROFILE,
    MODEL_NAMES,
    apply_cell,
    read_cell,
    student_recipe,
)
from assignments.transformer_mt.training_part import MTKIT_DIR
from autograder.config import load_config
from autograder.sandbox import Worker, WorkerFailure

CONFIG = load_config()
BOUNDS = training_settings(CONFIG).hparam_bounds
PROFILE = training_settings(CONFIG).profile_hparams("cpu")


def _item(value: object) -> dict:
    kind = "int" if type(value) is int else "float" if type(value) is float else "other"
    return {"kind": kind, "value": value if kind != "other" else None, "text": repr(value)}


def test_values_are_read_as_the_notebook_leaves_them() -> None:
    source = (
        "embedding_dim = 4 * 64\nnum_heads = 8\nnum_heads = 4\nlearning_rate = 5e-4\n"
        "drop_prob = True\nbatch_size = 'big'\nimport numpy as np\nepochs = np.int64(3)\n"
    )
    with Worker(source, extra_paths=[MTKIT_DIR]) as worker:
        described = read_cell(worker, CELL_NAMES)
    assert described["embedding_dim"] == {"kind": "int", "value": 256, "text": "256"}
    assert described["num_heads"]["value"] == 4  # the last binding wins
    assert described["learning_rate"] == {"kind": "float", "value": 5e-4, "text": "0.0005"}
    assert described["drop_prob"]["kind"] == "other"  # True is not a probability
    assert described["batch_size"] == {"kind": "other", "value": None, "text": "'big'"}
    assert described["epochs"]["kind"] == "int" and described["epochs"]["value"] == 3
    assert "feed_forward_dim" not in described and "num_layers" not in described


def test_a_forged_reply_reads_as_unusable() -> None:
    # The worker is untrusted: a submission may replace the describing function.
    source = (
        "import mtkit.worker_hparams as w\n"
        "w.describe_values = lambda **k: {n: {'kind': 'int', 'value': 'lots', 'text': 'x'} for n in k}\n"
        "embedding_dim = 256\n"
    )
    with Worker(source, extra_paths=[MTKIT_DIR]) as worker:
        described = read_cell(worker, CELL_NAMES)
    assert described["embedding_dim"]["kind"] == "other"
    assert apply_cell(PROFILE, described, BOUNDS, CELL_NAMES).problem


def test_a_value_whose_repr_hangs_costs_only_the_request_timeout() -> None:
    # Loadable by the notebook loader: class definitions and a plain name, no call at top level.
    source = (
        "class Slow(type):\n    def __repr__(cls):\n        while True:\n            pass\n"
        "class Big(metaclass=Slow):\n    pass\nembedding_dim = Big\n"
    )
    with Worker(source, extra_paths=[MTKIT_DIR]) as worker:
        started = time.monotonic()
        with pytest.raises(WorkerFailure):
            read_cell(worker, CELL_NAMES, timeout_s=2)
        assert time.monotonic() - started < 20


def test_values_in_bounds_replace_the_profiles_and_missing_ones_keep_it() -> None:
    described = {"embedding_dim": _item(128), "num_heads": _item(4), "learning_rate": _item(1e-3), "epochs": _item(5)}
    settings = apply_cell(PROFILE, described, BOUNDS, CELL_NAMES)
    assert settings.problem is None
    assert settings.hparams["embedding_dim"] == 128 and settings.hparams["max_epochs"] == 5
    assert settings.hparams["learning_rate"] == 1e-3
    assert settings.hparams["num_layers"] == PROFILE["num_layers"]
    assert settings.sources["epochs"] == FROM_NOTEBOOK and settings.sources["num_layers"] == FROM_PROFILE
    assert settings.summary().startswith(
        "embedding_dim 128, num_heads 4, learning_rate 0.001, epochs 5 (your notebook); "
    )
    recipe = student_recipe(settings)
    assert recipe["lr_decay_steps"] == 0 and recipe["warmup_steps"] == PROFILE["warmup_steps"]


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("num_layers", 7, "`num_layers = 7` is outside the range this course allows (from 1 to 6)"),
        ("num_layers", 2.0, "`num_layers = 2.0` must be an integer from 1 to 6"),
        ("drop_prob", 0.9, "`drop_prob = 0.9` is outside the range this course allows (from 0 to 0.5)"),
        ("learning_rate", "fast", "`learning_rate = 'fast'` must be a number from 1e-05 to 0.01"),
        ("num_heads", 3, f"`num_heads = 3` must divide `embedding_dim = {PROFILE['embedding_dim']}`"),
    ],
)
def test_unusable_values_are_named_with_the_allowed_range(name: str, value: object, expected: str) -> None:
    settings = apply_cell(PROFILE, {name: _item(value)}, BOUNDS, CELL_NAMES)
    assert settings.problem is not None and expected in settings.problem
    assert settings.problem.endswith("Change it and submit again.")


def test_checkpoint_mode_reads_only_the_model_sizes() -> None:
    settings = apply_cell(PROFILE, {"learning_rate": _item(99.0), "num_layers": _item(3)}, BOUNDS, MODEL_NAMES)
    assert settings.problem is None and settings.hparams["num_layers"] == 3
    assert "learning_rate" not in settings.values
