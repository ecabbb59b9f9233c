"""Part 1's grader.yml model: the engine's sections, with the training part's threshold and budget."""

# assignment.yml `config:` names AttentionEncoderConfig, so the engine validates Part 1's grader.yml
# (assignments/attention_encoder/grader.yml) with it without importing the assignment's code: keep
# this module free of torch and of the checks.

from __future__ import annotations

from pydantic import Field

from autograder.config import GraderConfig
from autograder.config.training import TrainingSection


class TrainingConfig(TrainingSection):
    """training: whether the reversal training part is graded, the bar it must reach and its budget."""

    threshold_accuracy: float = Field(default=0.9, gt=0, le=1)
    """Test accuracy (0-1) the student's Encoder must reach on sequence reversal."""
    time_budget_s: float = Field(default=120, gt=0)
    """Wall-clock budget of the training in the worker (seconds); the request limit covers it."""


class AttentionEncoderConfig(GraderConfig):
    """grader.yml when it grades Part 1: the engine's sections, with Part 1's `training`."""

    training: TrainingConfig = Field(default_factory=TrainingConfig)
    """See training.*."""


def training_settings(config: GraderConfig) -> TrainingConfig:
    """Part 1's `training` section of a configuration that grades Part 1.

    Args:
        config: a validated configuration.

    Returns:
        The section.

    Raises:
        TypeError: the configuration grades another assignment (its model is not this one).
    """
    if not isinstance(config, AttentionEncoderConfig):
        raise TypeError(f"the configuration grades {config.assignment.name!r}, not attention_encoder")
    return config.training
