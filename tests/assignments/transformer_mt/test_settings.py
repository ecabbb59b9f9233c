"""Part 2's grader.yml sections (assignments/transformer_mt/settings.py): the models, hooks and typed accessors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assignments.transformer_mt.settings import (
    TRAINING_MODES,
    DataConfig,
    TrainingConfig,
    TransformerMtConfig,
    part2_settings,
    training_settings,
)
from autograder.assignment_folder import ASSIGNMENTS_DIR, read_bundled_data, read_config_model
from autograder.config import ConfigError, TrainingSection, load_config

ROOT = Path(__file__).resolve().parents[3]
UNKNOWN_KEYS = yaml.safe_load((ROOT / "tests" / "fixtures" / "config" / "part2_unknown_keys.yml").read_text())


def test_assignment_yml_declares_the_model_and_the_bundled_data() -> None:
    folder = ASSIGNMENTS_DIR / "transformer_mt"
    assert read_config_model(folder) is TransformerMtConfig
    assert TransformerMtConfig.model_fields["data"].annotation is DataConfig
    assert TransformerMtConfig.model_fields["training"].annotation is TrainingConfig
    assert issubclass(TrainingConfig, TrainingSection)
    data = read_bundled_data(folder)
    assert data is not None and (data.env, data.bundled) == ("MULTI30K_DIR", "data/multi30k")
    assert data.files == ("train", "val", "test_2016_flickr")


def test_reading_the_config_imports_no_torch_nor_the_checks() -> None:
    code = (
        "import sys; from autograder.config import load_config; load_config(); "
        "print(sorted(m for m in sys.modules if {'torch', 'reference'} & set(m.split('.')) or 'checks' in m))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_typed_accessors_return_part2_sections() -> None:
    config = load_config()
    assert isinstance(training_settings(config), TrainingConfig) and isinstance(part2_settings(config).data, DataConfig)
    assert training_settings(config).mode in TRAINING_MODES
    other = load_config(overrides={"assignment.name": "attention_encoder"})
    with pytest.raises(TypeError, match="attention_encoder"):
        training_settings(other)
    with pytest.raises(TypeError, match="attention_encoder"):
        part2_settings(other)


@pytest.mark.parametrize(
    "case, key",
    [
        ("data_key", "data.vocab_size: unknown key"),
        ("training_key", "training.threshold_accuracy: unknown key"),
        ("profile_key", "training.profiles.cpu.warmup: unknown key"),
    ],
)
def test_unknown_part2_keys_are_rejected(tmp_path: Path, case: str, key: str) -> None:
    path = tmp_path / "grader.yml"
    path.write_text(yaml.safe_dump({"assignment": {"name": "transformer_mt"}, **UNKNOWN_KEYS[case]}))
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value).startswith(key)


def test_the_hooks_the_core_calls() -> None:
    training = training_settings(load_config(overrides={"training.enabled": True}))
    assert training.summary() == f"enabled, mode {training.mode}"
    assert TrainingConfig().summary() == "disabled"
    assert training.resolved_for(True).profile == "gpu" and training.resolved_for(False).profile == "cpu"
    explicit = training.model_copy(update={"profile": "cpu"})
    assert explicit.resolved_for(True) is explicit  # a named profile stays
    assert training.resolved_for(False).ray_options() == {"num_cpus": training.threads}
    assert training.resolved_for(True).ray_options() == {"num_cpus": training.threads, "gpu": 1}
