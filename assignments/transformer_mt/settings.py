"""Part 2's grader.yml sections: `data` (Multi30k) and `training` (mode, BLEU bar, bounds, profiles).

assignment.yml `config:` names TransformerMtConfig (the engine's model with these two sections), so
the engine validates grader.yml with it without importing the assignment's heavy code (keep this
module free of torch and of the checks).
The recipe keys of a profile take their defaults and choices from mtkit.recipe.Recipe (the one
place they are written); the model sizes, dropout and label smoothing are grading settings only.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from assignments.transformer_mt.checkpoint_file import DEFAULT_NAMES as DEFAULT_CHECKPOINT_NAMES
from assignments.transformer_mt.messages import t
from autograder.config import GraderConfig
from autograder.config.base import KeyProblem, Section
from autograder.config.training import TrainingSection
from mtkit.constants import DEFAULT_MAX_LENGTH
from mtkit.recipe import LrSchedule, Precision, Recipe, resolve_profile_name

TrainingMode = Literal["recipe", "student_hparams", "checkpoint"]
TRAINING_MODES: tuple[str, ...] = get_args(TrainingMode)  # training.mode's values (the modes' table keeps them)
_RECIPE: dict[str, Any] = {f.name: f.default for f in fields(Recipe)}


class DataConfig(Section):
    """data: where Multi30k comes from and how it is prepared."""

    local_dir: str | None = None
    """Directory of raw Multi30k files; null: $MULTI30K_DIR, else the Hugging Face dataset
    bentrevett/multi30k."""
    tokenizer: Literal["blank", "model"] = "blank"
    """blank (spacy.blank) or model (installed spaCy models)."""
    max_length: int = Field(default=DEFAULT_MAX_LENGTH, ge=3)
    """Training pairs longer than this (with <sos>/<eos>) are dropped."""
    cache_dir: str | None = None
    """Prepared-data cache; null: $MTKIT_CACHE_DIR or ~/.cache/mtkit."""


class ProfileConfig(Section):
    """training.profiles.<name>: the model sizes and the recipe the grader trains with."""

    embedding_dim: int = Field(default=256, ge=1)
    """Model width d."""
    feed_forward_dim: int = Field(default=512, ge=1)
    """Hidden size of each feed-forward block."""
    num_heads: int = Field(default=8, ge=1)
    """Attention heads; must divide embedding_dim."""
    num_layers: int = Field(default=2, ge=1)
    """Encoder layers and decoder layers (each)."""
    drop_prob: float = Field(default=0.1, ge=0, lt=1)
    """Dropout probability."""
    batch_size: int = Field(default=_RECIPE["batch_size"], ge=1)
    """Sentence pairs per batch."""
    max_tokens: int = Field(default=_RECIPE["max_tokens"], ge=0)
    """Token-based batches: at most this many padded tokens per batch and side, batch_size then caps
    the rows (0 = batches of batch_size pairs)."""
    learning_rate: float = Field(default=_RECIPE["learning_rate"], gt=0)
    """Peak Adam learning rate."""
    warmup_steps: int = Field(default=_RECIPE["warmup_steps"], ge=0)
    """Linear warm-up steps before the peak learning rate."""
    lr_schedule: LrSchedule = _RECIPE["lr_schedule"]
    """After warm-up: constant | inverse_sqrt | linear | cosine (linear and cosine reach 0 at
    lr_decay_steps)."""
    lr_decay_steps: int = Field(default=_RECIPE["lr_decay_steps"], ge=0)
    """Step at which linear/cosine decay reaches 0 (0 = the end of max_epochs)."""
    label_smoothing: float = Field(default=0.1, ge=0, lt=1)
    """Label smoothing of the cross-entropy criterion."""
    clip_grad_norm: float = Field(default=_RECIPE["clip_grad_norm"], ge=0)
    """Gradient-norm clipping threshold (0 = off)."""
    max_epochs: int = Field(default=_RECIPE["max_epochs"], ge=1)
    """Upper bound on training epochs."""
    max_steps: int = Field(default=_RECIPE["max_steps"], ge=0)
    """Upper bound on optimizer steps (0 = none besides max_epochs); also caps runs with the
    student's epochs in student_hparams mode."""
    # Not Recipe's default (0 = no limit): a graded run always has a budget, it bounds the worker.
    time_budget_s: float = Field(default=600, gt=0)
    """Wall-clock budget for training; stops at the first epoch/evaluation boundary past it."""
    eval_every_steps: int = Field(default=_RECIPE["eval_every_steps"], ge=0)
    """Evaluate validation BLEU every N steps (0 = per epoch)."""
    eval_start_step: int = Field(default=_RECIPE["eval_start_step"], ge=0)
    """No step-based evaluation before this step (evaluations cost decoding time; early ones cannot
    reach the threshold)."""
    hopeless_bleu: float = Field(default=_RECIPE["hopeless_bleu"], ge=0, le=1)
    """Early stop of runs that cannot reach the bar: training stops at the first evaluation at or
    after hopeless_after_steps whose best BLEU so far is still below this (0 = off;
    docs/SCALE.md)."""
    hopeless_after_steps: int = Field(default=_RECIPE["hopeless_after_steps"], ge=0)
    """The step from which hopeless_bleu applies (0 = off)."""
    late_hopeless_bleu: float = Field(default=_RECIPE["late_hopeless_bleu"], ge=0, le=1)
    """A second, higher floor for the early stop: at an evaluation at or after
    late_hopeless_after_steps, a run whose best BLEU is still below this is stopped (0 = off;
    docs/SCALE.md)."""
    late_hopeless_after_steps: int = Field(default=_RECIPE["late_hopeless_after_steps"], ge=0)
    """The step from which late_hopeless_bleu applies (0 = off)."""
    precision: Precision = _RECIPE["precision"]
    """auto (bf16 autocast on CUDA GPUs that support it, else fp32) | fp32 | bf16 | fp16 (fp16
    overflows the assignment's -1e10 attention mask)."""

    @model_validator(mode="after")
    def _heads_divide_width(self) -> ProfileConfig:
        if self.embedding_dim % self.num_heads:
            raise KeyProblem("num_heads", t("settings.heads_divide"))
        return self


def _bounds(low: float, high: float, description: str) -> Any:
    return Field(default_factory=lambda: [low, high], description=description)


class HparamBounds(Section):
    """training.hparam_bounds: the [min, max] a notebook's hyperparameter cell may choose per name
    (as the template spells them); student_hparams and checkpoint modes read the cell."""

    embedding_dim: list[float] = _bounds(16, 1024, "Model width d (an integer).")
    feed_forward_dim: list[float] = _bounds(16, 4096, "Feed-forward hidden size (an integer).")
    num_heads: list[float] = _bounds(1, 16, "Attention heads (an integer dividing embedding_dim).")
    num_layers: list[float] = _bounds(1, 6, "Encoder and decoder layers, each (an integer).")
    batch_size: list[float] = _bounds(8, 512, "Sentence pairs per batch (an integer).")
    drop_prob: list[float] = _bounds(0.0, 0.5, "Dropout probability.")
    learning_rate: list[float] = _bounds(1e-5, 1e-2, "Peak learning rate.")
    epochs: list[float] = _bounds(1, 30, "Training epochs (an integer); the profile's time budget still applies.")

    @field_validator("*")
    @classmethod
    def _min_max(cls, bounds: list[float]) -> list[float]:
        if len(bounds) != 2 or bounds[0] > bounds[1]:
            raise ValueError(f"expected [min, max] numbers with min <= max, got {bounds!r}")
        return bounds


class TrainingConfig(TrainingSection):
    """training: whether and how the training part is graded."""

    enabled: bool = False
    """Grade the training part (trains the student's model)."""
    mode: TrainingMode = "recipe"
    """recipe: the grader trains the submission with the profile. student_hparams: the same, with
    the notebook's hyperparameter cell (within hparam_bounds) in place of the profile's sizes,
    batch size, dropout, learning rate and epochs. checkpoint: no training; the weights the
    student submits next to the notebook are evaluated the same trusted way."""
    threshold_bleu: float = Field(default=0.2, ge=0, le=1)
    """Corpus BLEU (0-1) needed for the training points."""
    profile: str = "auto"
    """auto (gpu if CUDA is available, else cpu) or a profile name."""
    memory_mb: int = Field(default=12288, ge=1)
    """Address-space limit of the training worker."""
    threads: int = Field(default=2, ge=1)
    """Torch threads of the training worker (CPU)."""
    gpu_share: float = Field(default=1.0, gt=0, le=1)
    """Fraction of one GPU a gpu-profile training asks Ray for (num_gpus): 0.25 lets four trainings
    share a GPU. Measure with bench/device_share.py before lowering it (docs/SCALE.md)."""
    checkpoint_names: list[str] = Field(default_factory=lambda: list(DEFAULT_CHECKPOINT_NAMES), min_length=1)
    """checkpoint mode: file names looked for next to the notebook, first match wins; {stem} is the
    notebook's name without extension. Names without {stem} count only when the notebook is alone
    in its folder."""
    checkpoint_max_mb: float = Field(default=512, gt=0)
    """checkpoint mode: larger checkpoint files are refused."""
    memorisation_gap: float = Field(default=0.05, ge=0, le=1)
    """Largest validation - test BLEU gap (0-1) of the final weights; a larger one withholds the
    training points for a TA's review (docs/TRAINING_MODES.md: honest runs measured, what it
    cannot catch)."""
    hparam_bounds: HparamBounds = Field(default_factory=lambda: HparamBounds())
    """See training.hparam_bounds.<name>."""
    profiles: dict[str, ProfileConfig] = Field(default_factory=dict)
    """Profile name -> settings; `auto` picks gpu or cpu."""

    @field_validator("checkpoint_names")
    @classmethod
    def _plain_file_names(cls, names: list[str]) -> list[str]:
        if not all(name and "/" not in name and "\\" not in name for name in names):
            raise ValueError(t("settings.plain_file_names"))
        return names

    @model_validator(mode="after")
    def _profile_exists(self) -> TrainingConfig:
        if self.profile != "auto" and self.profile not in self.profiles:
            raise KeyProblem("profile", t("settings.no_profile", name=self.profile, known=", ".join(self.profiles)))
        return self

    def profile_name(self, name: str | None = None) -> str:
        """The profile a run uses: `name`, else training.profile; "auto" is gpu with CUDA (when a
        gpu profile exists), else cpu.

        Args:
            name: an explicit choice (e.g. a command-line flag), or None.

        Returns:
            A profile name (not checked for existence).
        """
        return resolve_profile_name(name or self.profile, self.profiles)

    def profile_hparams(self, name: str | None = None) -> dict[str, Any]:
        """The settings of one profile as a plain mapping (model sizes and recipe), for the
        training code and the worker.

        Args:
            name: as for `profile_name`.

        Returns:
            A fresh key -> value mapping.

        Raises:
            KeyError: no such profile.
        """
        chosen = self.profile_name(name)
        if chosen not in self.profiles:
            raise KeyError(f"no training profile {chosen!r} (have: {', '.join(self.profiles)})")
        return self.profiles[chosen].model_dump()

    def summary(self) -> str:
        """The section in a few words (`validate-config`).

        Returns:
            e.g. "enabled, mode recipe" or "disabled".
        """
        return f"enabled, mode {self.mode}" if self.enabled else "disabled"

    def resolved_for(self, has_gpu: bool) -> TrainingConfig:
        """training.profile "auto" made explicit: gpu when the machines have one and a gpu profile
        exists, else cpu.

        Args:
            has_gpu: whether the machines that train offer a GPU.

        Returns:
            A copy with an explicit profile (this section when it names one already).
        """
        if self.profile != "auto":
            return self
        return self.model_copy(update={"profile": "gpu" if has_gpu and "gpu" in self.profiles else "cpu"})

    def ray_options(self) -> dict[str, Any]:
        """The training threads as CPUs, and `gpu_share` of a GPU for the `gpu` profile.

        Returns:
            {"num_cpus": threads} plus {"gpu": gpu_share} when the profile is gpu.
        """
        options: dict[str, Any] = {"num_cpus": self.threads}
        if self.profile_name() == "gpu":
            options["gpu"] = self.gpu_share
        return options


class TransformerMtConfig(GraderConfig):
    """grader.yml when it grades Part 2: the engine's sections, with Part 2's `data` and its `training`."""

    data: DataConfig = Field(default_factory=DataConfig)
    """See data.*."""
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    """See training.*."""


def part2_settings(config: GraderConfig) -> TransformerMtConfig:
    """A configuration that grades Part 2, typed as such (its `data` section: `.data`).

    Args:
        config: a validated configuration.

    Returns:
        The same configuration.

    Raises:
        TypeError: it grades another assignment (its model is not this one).
    """
    if not isinstance(config, TransformerMtConfig):
        raise TypeError(f"the configuration grades {config.assignment.name!r}, not transformer_mt")
    return config


def training_settings(config: GraderConfig) -> TrainingConfig:
    """Part 2's `training` section of a configuration that grades Part 2.

    Args:
        config: a configuration validated with this assignment's model.

    Returns:
        The section.

    Raises:
        TypeError: the configuration grades another assignment.
    """
    return part2_settings(config).training
