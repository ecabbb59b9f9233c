"""Fixtures of the engine's training-part tests: a seconds-long profile and notebook variants."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from autograder.config import GraderConfig, load_config

ROOT = Path(__file__).resolve().parents[3]
TRAINING_FIXTURES = ROOT / "tests" / "fixtures" / "training"
CORRECT_NOTEBOOK = ROOT / "examples" / "correct_original_format.ipynb"


@pytest.fixture
def tiny_training_config() -> Callable[..., GraderConfig]:
    """Factory: the project config with training on and the cpu profile replaced by the tiny one.

    Call it with `mode=` (default recipe) and any other dotted overrides. The training part's own
    defences are tested here on notebooks whose unit parts are broken on purpose, so its
    `requires_parts` is emptied (the credit rule: tests/assignments/test_credit_own_code.py).
    """

    def build(mode: str = "recipe", **overrides: object) -> GraderConfig:
        settings = {"training.enabled": True, "training.profile": "cpu", "training.mode": mode}
        settings["parts.training.requires_parts"] = []
        profile = yaml.safe_load((TRAINING_FIXTURES / "tiny_profile.yml").read_text())
        settings.update({f"training.profiles.cpu.{key}": value for key, value in profile.items()})
        settings.update(overrides)
        return load_config(overrides=settings)

    return build


@pytest.fixture
def notebook_variant(tmp_path: Path) -> Callable[..., Path]:
    """Factory: the correct example notebook with the variants.yml patches named, applied in order.

    Each patch's snippet must occur exactly once. The notebook is written to its own folder
    (`folder` argument, default tmp_path/<last variant>), as `name` (default submission.ipynb).
    """
    variants = yaml.safe_load((TRAINING_FIXTURES / "variants.yml").read_text())

    def build(*names: str, folder: Path | None = None, name: str = "submission.ipynb") -> Path:
        notebook = json.loads(CORRECT_NOTEBOOK.read_text())
        for variant in names:
            patch, hits = variants[variant], 0
            for cell in notebook["cells"]:
                source = "".join(cell["source"])
                if patch["old"] in source:
                    hits += source.count(patch["old"])
                    cell["source"] = source.replace(patch["old"], patch["new"])
            assert hits == 1, f"variant {variant}: the snippet must occur once, found {hits}"
        target = folder or tmp_path / (names[-1] if names else "correct")
        target.mkdir(parents=True, exist_ok=True)
        path = target / name
        path.write_text(json.dumps(notebook))
        return path

    return build
