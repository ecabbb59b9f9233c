"""CLI `python -m assignments.transformer_mt.reference_training`: train the reference Transformer with a
grader.yml profile (the settings resolved here, the training in `reference.transformer_mt.train`)."""

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

from assignments.transformer_mt.settings import data_settings, training_settings
from autograder.config import ConfigError, load_config, parse_settings
from reference.transformer_mt.train import TrainingRun, run


def _profile_overrides(pairs: Sequence[str], profile: str) -> dict[str, Any]:
    """The `--set KEY=VALUE` pairs (read by the CLI's own parser) as keys of the chosen profile."""
    try:
        settings = parse_settings(list(pairs))
    except ConfigError as error:
        raise SystemExit(str(error)) from None
    return {f"training.profiles.{profile}.{key}": value for key, value in settings.items()}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m assignments.transformer_mt.reference_training", description=__doc__)
    p.add_argument("--profile", help="training profile in grader.yml (default: training.profile)")
    p.add_argument("--config", help="grader.yml to read (default: the project's)")
    p.add_argument("--out", help="output folder (default: runs/<profile>)")
    p.add_argument("--target-bleu", type=float, help="stop at this BLEU (default: threshold_bleu)")
    p.add_argument("--max-epochs", type=int, help="override the profile's max_epochs")
    p.add_argument("--time-budget", type=float, help="override time_budget_s (seconds)")
    p.add_argument("--seed", type=int, help="default: grading.seed")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any profile key, e.g. --set embedding_dim=128 (repeatable)",
    )
    p.add_argument("--data-dir", help="raw Multi30k folder (default: data.local_dir / $MULTI30K_DIR)")
    p.add_argument(
        "--expected-counts",
        metavar="train=N,validation=N,test=N",
        help="line counts of a test slice instead of the real 29,000/1,014/1,000",
    )
    p.add_argument("--device", help="cpu or cuda (default: cuda if available)")
    p.add_argument(
        "--teacher-forced",
        action="store_true",
        help="also report the original notebook's teacher-forced BLEU (labelled, not graded)",
    )
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    return p


def training_run(args: argparse.Namespace) -> TrainingRun:
    """The run the arguments ask for, with grader.yml's profile, data section and seed.

    Args:
        args: parsed command-line arguments (see `_parser`).

    Returns:
        The resolved settings of `reference.transformer_mt.train.run`.
    """
    base = load_config(args.config)
    name = training_settings(base).profile_name(args.profile)
    config = load_config(args.config, _profile_overrides(args.set, name)) if args.set else base
    training = training_settings(config)
    data = data_settings(config)
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
    metrics = run(training_run(_parser().parse_args(argv)))
    return 0 if metrics["reached_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
