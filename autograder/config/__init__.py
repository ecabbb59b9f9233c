"""grader.yml as typed models: every key's type, default, range and description, and the loader."""

from __future__ import annotations

from typing import get_args

from autograder.config.base import ConfigError
from autograder.config.loading import (
    DEFAULT_CONFIG_PATH,
    PROJECT_ROOT,
    GraderConfig,
    describe,
    iter_keys,
    load_config,
    validate,
)
from autograder.config.sections import (
    AssignmentConfig,
    DataConfig,
    FeedbackConfig,
    GradingConfig,
    Isolation,
    Language,
    PartConfig,
    WorkerConfig,
)
from autograder.config.training import HparamBounds, ProfileConfig, TrainingConfig, TrainingMode

# The allowed values of the CLI flags that override these keys.
TRAINING_MODES: tuple[str, ...] = get_args(TrainingMode)
ISOLATION_LEVELS: tuple[str, ...] = get_args(Isolation)
FEEDBACK_LANGUAGES: tuple[str, ...] = get_args(Language)

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "FEEDBACK_LANGUAGES",
    "ISOLATION_LEVELS",
    "PROJECT_ROOT",
    "TRAINING_MODES",
    "AssignmentConfig",
    "ConfigError",
    "DataConfig",
    "FeedbackConfig",
    "GraderConfig",
    "GradingConfig",
    "HparamBounds",
    "Isolation",
    "Language",
    "PartConfig",
    "ProfileConfig",
    "TrainingConfig",
    "TrainingMode",
    "WorkerConfig",
    "describe",
    "iter_keys",
    "load_config",
    "validate",
]
