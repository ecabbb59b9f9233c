"""The training part: trained in the sandbox with the submission's own masks and loss, scored honestly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from autograder.config import load_config
from autograder.engine import grade_submission
from autograder.results import SubmissionResult

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "training"
CORRECT = ROOT / "examples" / "correct_original_format.ipynb"


def _config() -> dict:
    overrides = {"training.enabled": True, "training.profile": "cpu"}
    profile = yaml.safe_load((FIXTURES / "tiny_profile.yml").read_text())
    overrides.update({f"training.profiles.cpu.{key}": value for key, value in profile.items()})
    return load_config(overrides=overrides)


def _variant(name: str, tmp_path: Path) -> Path:
    patch = yaml.safe_load((FIXTURES / "variants.yml").read_text())[name]
    notebook = json.loads(CORRECT.read_text())
    hits = 0
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if patch["old"] in source:
            hits += source.count(patch["old"])
            cell["source"] = source.replace(patch["old"], patch["new"])
    assert hits == 1, f"variant {name}: the snippet must occur once, found {hits}"
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def _training(result: SubmissionResult) -> tuple[float, dict]:
    part = next(p for p in result.parts if p.part == "training")
    assert not part.skipped
    return part.points, result.extras["training"]


def test_a_model_copying_the_next_target_token_scores_no_bleu_and_no_points(tmp_path: Path) -> None:
    points, details = _training(grade_submission(_variant("copy_next_token", tmp_path), _config(),
                                                 parts=["training"]))
    assert points == 0
    assert details["evaluation"]["bleu"] < 0.05
    # Its logits are not what its weights compute, so it is scored on its own translations.
    assert details["evaluated_by"].startswith("the submission's own model")


def test_a_future_visible_mask_is_trained_as_is_and_gets_its_honest_bleu(tmp_path: Path) -> None:
    result = grade_submission(_variant("future_visible_mask", tmp_path), _config(), parts=["training"])
    points, details = _training(result)
    assert points == 0
    assert details["evaluation"]["bleu"] < 0.05
    message = next(p for p in result.parts if p.part == "training").checks[0].message
    assert "Validation BLEU" in message and "look-ahead mask" in message
    assert details["history"]["losses"], "the loss curve is reported"


def test_same_notebook_same_profile_same_seed_gives_identical_bleu_and_losses() -> None:
    first = _training(grade_submission(CORRECT, _config(), parts=["training"]))[1]
    second = _training(grade_submission(CORRECT, _config(), parts=["training"]))[1]
    assert first["evaluated_by"].startswith("reference architecture")
    assert first["evaluation"]["bleu"] == second["evaluation"]["bleu"]
    assert first["bleu_curve"] == second["bleu_curve"]
    assert [w["loss"] for w in first["history"]["losses"]] == [w["loss"] for w in second["history"]["losses"]]


def test_training_is_skipped_with_a_reason_when_the_model_cannot_run(tmp_path: Path) -> None:
    template = ROOT / "examples" / "template_untouched.ipynb"
    result = grade_submission(template, _config(), parts=["training"])
    part = next(p for p in result.parts if p.part == "training")
    assert part.points == 0
    assert part.checks[0].message.startswith("Training was skipped")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_correct_notebook_earns_the_training_points_with_the_cpu_profile() -> None:
    config = load_config(overrides={"training.enabled": True, "training.profile": "cpu"})
    points, details = _training(grade_submission(CORRECT, config, parts=["training"]))
    assert points == config["parts"]["training"]["points"]
    assert details["evaluation"]["bleu"] >= config["training"]["threshold_bleu"]
    assert details["training"]["stop_reason"] == "target"
