"""Training-recipe settings: the Recipe dataclass, the profile-name rule and the learning-rate schedule."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

from mtkit.constants import DEFAULT_POOL_SIZE

# The one definition of the recipe's choices and defaults: grader.yml's training profiles
# (autograder.config) take theirs from here. mtkit never imports autograder (it ships into the
# untrusted worker on its own), and this module stays free of torch so the config can import it.
LrSchedule = Literal["constant", "inverse_sqrt", "linear", "cosine"]
Precision = Literal["auto", "fp32", "bf16", "fp16"]
LR_SCHEDULES: tuple[str, ...] = get_args(LrSchedule)
PRECISIONS: tuple[str, ...] = get_args(Precision)


@dataclass
class Recipe:
    """Everything about optimisation that is not the model itself."""

    batch_size: int = 128  # sentence pairs per batch (a row cap when max_tokens is set)
    max_tokens: int = 0  # >0: batches hold at most this many padded tokens per side
    learning_rate: float = 5e-4  # peak Adam learning rate
    warmup_steps: int = 0  # linear warm-up from 0 to the peak
    lr_schedule: LrSchedule = "constant"  # after warm-up: constant | inverse_sqrt | linear | cosine
    lr_decay_steps: int = 0  # linear/cosine reach 0 here; 0 = the whole run (max_epochs)
    adam_betas: tuple[float, float] = (0.9, 0.98)
    adam_eps: float = 1e-9
    clip_grad_norm: float = 1.0  # 0 = off
    max_epochs: int = 4
    max_steps: int = 0  # 0 = no limit besides max_epochs
    time_budget_s: float = 0.0  # 0 = no limit; checked after every step
    eval_every_steps: int = 0  # 0 = evaluate at the end of each epoch
    eval_start_step: int = 0  # no step-based evaluation before this step
    target_bleu: float | None = None  # stop as soon as an evaluation reaches it
    hopeless_bleu: float = 0.0  # with hopeless_after_steps: stop a run whose best BLEU stays below this
    hopeless_after_steps: int = 0  # ... at an evaluation at or after this step (0 = never; see is_hopeless)
    late_hopeless_bleu: float = 0.0  # a second, higher floor (a run far from the bar late in its schedule) ...
    late_hopeless_after_steps: int = 0  # ... from this step on (0 = never)
    seed: int = 0
    pool_size: int = DEFAULT_POOL_SIZE  # length-bucketing pool (see mtkit.batching)
    log_every_steps: int = 25  # loss-window size of the JSON log
    precision: Precision = "auto"  # auto: bf16 autocast on CUDA with bf16, else fp32 (fp16: see _autocast_dtype)

    def __post_init__(self) -> None:
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {self.lr_schedule!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.batch_size < 1 or self.max_epochs < 1 or self.max_tokens < 0:
            raise ValueError("batch_size and max_epochs must be positive, max_tokens non-negative")


def resolve_profile_name(requested: str, available: Collection[str]) -> str:
    """The training profile to use: "auto" means "gpu" when CUDA is available (and a gpu profile
    exists), else "cpu"; any other name is returned as given.

    Args:
        requested: a profile name or "auto".
        available: the names of the profiles defined.

    Returns:
        A profile name (not checked for existence).
    """
    if requested != "auto":
        return requested
    import torch  # here, not at the top: the configuration imports this module and needs no torch

    return "gpu" if torch.cuda.is_available() and "gpu" in available else "cpu"


def recipe_from_profile(profile: Mapping[str, Any], **overrides: Any) -> Recipe:
    """Build a Recipe from a profile mapping; keys that are not recipe fields are ignored.

    Args:
        profile: e.g. `config.training.profile_hparams("cpu")` (model keys such as embedding_dim are
            skipped).
        **overrides: Recipe fields that win over the profile (e.g. seed, target_bleu).

    Returns:
        The Recipe.
    """
    names = {f.name for f in fields(Recipe)}
    values = {k: v for k, v in profile.items() if k in names}
    values.update(overrides)
    return Recipe(**values)


def is_hopeless(step: int, best_bleu: float | None, recipe: Recipe) -> bool:
    """The early-stop rule for runs that cannot reach the bar (docs/SCALE.md, section 2).

    At an evaluation at step >= `hopeless_after_steps`, a run whose best BLEU so far is still
    below `hopeless_bleu` is stopped: every correct run recorded on the cpu profile's recipe was
    far above that bar by then (see the tests' recorded curves), while models that copy the
    target under teacher forcing score ~0 at every evaluation. A second, later floor
    (`late_hopeless_bleu` from `late_hopeless_after_steps`) stops runs that learn, but too slowly
    to reach the bar before the schedule ends (e.g. a model that never learns to stop).

    Args:
        step: the optimizer step of the evaluation just made.
        best_bleu: the best BLEU measured so far (None: none yet).
        recipe: supplies the floors and their steps (a floor or its step 0: that floor is off).

    Returns:
        True when training should stop now.
    """
    if best_bleu is None:
        return False
    floors = (
        (recipe.hopeless_after_steps, recipe.hopeless_bleu),
        (recipe.late_hopeless_after_steps, recipe.late_hopeless_bleu),
    )
    return any(after > 0 and floor > 0 and step >= after and best_bleu < floor for after, floor in floors)


def lr_factor(step: int, recipe: Recipe, total_steps: int) -> float:
    """Multiplier of the peak learning rate for optimizer step `step` (0-based).

    Args:
        step: number of steps already taken.
        recipe: supplies warmup_steps, lr_schedule and lr_decay_steps.
        total_steps: length of the run in steps (used when lr_decay_steps is 0).

    Returns:
        A factor in [0, 1].
    """
    n = step + 1  # the first update already gets a non-zero rate
    warm = recipe.warmup_steps
    if warm and n <= warm:
        return n / warm
    if recipe.lr_schedule == "constant":
        return 1.0
    if recipe.lr_schedule == "inverse_sqrt":
        return math.sqrt(max(warm, 1) / n)
    horizon = max((recipe.lr_decay_steps or total_steps) - warm, 1)
    progress = min((n - warm) / horizon, 1.0)
    if recipe.lr_schedule == "linear":
        return max(1.0 - progress, 0.0)
    return 0.5 * (1.0 + math.cos(math.pi * progress))  # cosine
