"""CLI `python -m assignments.transformer_mt.reference_training`: train the reference Transformer with a
grader.yml profile (the settings resolved here, the training in `assignments.transformer_mt.reference.train`)."""

from __future__ import annotations

import os

# Before torch starts OpenMP: with the default (active) wait policy two threads run 3-5x slower
# whenever another process is busy (docs/TRAINING_RECIPE.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assignments.transformer_mt.reference.train import TrainingRun, run
from assignments.transformer_mt.settings import part2_settings, training_settings
from autograder.cli_table import parse_command
from autograder.config import ConfigError, load_config, parse_settings


def _profile_overrides(pairs: Sequence[str], profile: str) -> dict[str, Any]:
    """The `--set KEY=VALUE` pairs (read by the CLI's own parser) as keys of the chosen profile."""
    try:
        settings = parse_settings(list(pairs))
    except ConfigError as error:
        raise SystemExit(str(error)) from None
    return {f"training.profiles.{profile}.{key}": value for key, value in settings.items()}


def training_run(args: argparse.Namespace) -> TrainingRun:
    """The run the arguments ask for, with grader.yml's profile, data section and seed.

    Args:
        args: parsed command-line arguments (see `_parser`).

    Returns:
        The resolved settings of `assignments.transformer_mt.reference.train.run`.
    """
    base = load_config(args.config)
    name = training_settings(base).profile_name(args.profile)
    config = load_config(args.config, _profile_overrides(args.set, name)) if args.set else base
    training = training_settings(config)
    data = part2_settings(config).data
    counts = None
    if args.expected_counts:
        counts = {k: int(v) for k, v in (item.split("=") for item in args.expected_counts.split(","))}
    overrides = {"max_epochs": args.max_epochs, "time_budget_s": args.time_budget}
    return TrainingRun(
        profile=name,
        hparams=training.profile_hparams(name),
        seed=config.grading.seed if args.seed is None else args.seed,
        target_bleu=training.threshold_bleu if args.target_bleu is None else args.target_bleu,
        out=Path(args.out or f"runs/{name}"),
        data_dir=args.data_dir or data.local_dir,
        tokenizer=data.tokenizer,
        max_length=data.max_length,
        cache_dir=data.cache_dir,
        device=args.device,
        expected_counts=counts,
        recipe_overrides={key: value for key, value in overrides.items() if value is not None},
        teacher_forced=args.teacher_forced,
        progress=not args.no_progress,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point.

    Args:
        argv: arguments (default sys.argv[1:]).

    Returns:
        0 when the target BLEU was reached, 1 otherwise.
    """
    prog = "python -m assignments.transformer_mt.reference_training"
    args = parse_command("reference_training", argv, Path(__file__).with_suffix(".yml"), prog=prog)
    metrics = run(training_run(args))
    return 0 if metrics["reached_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
