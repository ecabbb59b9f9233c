"""grader.yml as typed models: every key's type, default, range and description, and the loader."""

from __future__ import annotations

from typing import get_args

from autograder.config.base import ConfigError
from autograder.config.late import LateConfig, parse_moment
from autograder.config.loading import (
    DEFAULT_CONFIG_PATH,
    PROJECT_ROOT,
    GraderConfig,
    config_model,
    describe,
    iter_keys,
    load_config,
    parse_settings,
    validate,
)
from autograder.config.sections import Isolation, Language, PartConfig
from autograder.config.training import TrainingSection

# The allowed values of the CLI flags that override these keys.
ISOLATION_LEVELS: tuple[str, ...] = get_args(Isolation)
FEEDBACK_LANGUAGES: tuple[str, ...] = get_args(Language)

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "FEEDBACK_LANGUAGES",
    "ISOLATION_LEVELS",
    "PROJECT_ROOT",
    "ConfigError",
    "GraderConfig",
    "LateConfig",
    "PartConfig",
    "TrainingSection",
    "config_model",
    "describe",
    "iter_keys",
    "load_config",
    "parse_moment",
    "parse_settings",
    "validate",
]
