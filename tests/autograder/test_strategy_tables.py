"""The strategy tables: every training mode and part kind is one registered class, consistent with config."""

from __future__ import annotations

from pathlib import Path

from assignments.transformer_mt.settings import TRAINING_MODES as CONFIG_MODES
from assignments.transformer_mt.training_modes import TRAINING_MODES, CheckpointMode, TrainingMode
from autograder.assignment import assignment_of, load_assignment
from autograder.config import load_config
from autograder.i18n import LANGUAGES, catalogue
from autograder.part_kinds import PART_KINDS, TrainingPart, UnitParts, part_kind

GRADER_YML = Path(__file__).resolve().parents[2] / "grader.yml"


def test_the_modes_config_accepts_are_the_registered_strategies() -> None:
    assert tuple(TRAINING_MODES) == tuple(CONFIG_MODES)
    for name, mode in TRAINING_MODES.items():
        assert isinstance(mode, TrainingMode) and mode.name == name


def test_every_mode_has_its_messages_in_every_language() -> None:
    messages_dir = load_assignment("transformer_mt").messages_dir  # the training modes are Part 2's
    assert messages_dir is not None
    for language in LANGUAGES:
        messages = catalogue(language, messages_dir)
        for name in TRAINING_MODES:
            assert f"training.method.{name}" in messages, (language, name)
            assert f"training.low_bleu_hint.{name}" in messages, (language, name)


def test_only_the_checkpoint_mode_takes_a_file_beside_the_notebook_and_skips_the_loss() -> None:
    assert [m.name for m in TRAINING_MODES.values() if m.submits_checkpoint] == [CheckpointMode.name]
    assert "calculate_loss" not in TRAINING_MODES["checkpoint"].needed
    assert all("calculate_loss" in m.needed for m in TRAINING_MODES.values() if not m.submits_checkpoint)


def test_each_part_of_grader_yml_has_one_kind_and_unit_parts_are_graded_first() -> None:
    config = load_config(GRADER_YML)
    training_part = config.training_part()
    assert training_part == "training"  # Part 2's, named by its Assignment
    kinds = {name: part_kind(name, assignment_of(config)) for name in config.parts}
    assert isinstance(kinds[training_part], TrainingPart)
    assert all(isinstance(kind, UnitParts) for name, kind in kinds.items() if name != training_part)
    assert list(PART_KINDS) == [UnitParts.name, TrainingPart.name]
