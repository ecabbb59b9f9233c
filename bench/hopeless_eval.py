"""Benchmark: what the evaluations of a hopeless training run cost, without and with the bounds.

A run that cannot pass (e.g. examples/buggy.ipynb, whose model never learns to stop) is evaluated at
every pause of the `cpu` profile (steps 200, 210, ..., 240 before the hopeless stop) and once more at
the end on the validation and the test split. This script builds the profile's reference model,
forbids it <eos> (every sentence runs to its limit, as the buggy model's do) and measures, in CPU
seconds of this process (a busy machine barely changes them) and wall seconds:

- before: every evaluation decodes the whole split up to max_length;
- after: a pause decodes ESTIMATE_SENTENCES sentences (its BLEU is far below the bar, so that
  estimate stands), and every sentence stops at assignments.transformer_mt.reference.evaluate.TRUSTED_LENGTH_CAP.

Usage: python bench/hopeless_eval.py [--pauses 5] [--threads 2]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/hopeless_eval.py` from anywhere

import torch  # noqa: E402

from assignments.transformer_mt.reference.evaluate import TRUSTED_LENGTH_CAP, evaluate_model  # noqa: E402
from assignments.transformer_mt.reference.train import build_model  # noqa: E402
from assignments.transformer_mt.settings import training_settings  # noqa: E402
from assignments.transformer_mt.training_eval import ESTIMATE_SENTENCES, load_data  # noqa: E402
from autograder.config import load_config  # noqa: E402
from mtkit.constants import EOS_IDX  # noqa: E402


def timed(run: Callable[[], dict[str, Any]]) -> tuple[float, float, dict[str, Any]]:
    """Returns: (CPU seconds of this process, wall seconds, the evaluation) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = run()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def main() -> None:
    """Print the per-evaluation and per-run figures, before and after, with the load average."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pauses", type=int, default=5, help="evaluations before the hopeless stop (cpu profile: 5)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the grader's trusted side uses 2)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = load_config()
    data = load_data(config)
    sizes = training_settings(config).profile_hparams("cpu")
    torch.manual_seed(0)
    model = build_model(sizes, {lang: len(v) for lang, v in data.vocabs.items()}, data.max_length).eval()
    with torch.no_grad():
        model.decoder.dense_layer.bias[EOS_IDX] = -1e4  # never stops: only a limit ends a sentence
    load = os.getloadavg()[0]
    runs = {
        "whole validation split, no cap (before: every evaluation)": lambda: evaluate_model(
            model, data, length_cap=None
        ),
        "whole validation split, capped (after: the final evaluation)": lambda: evaluate_model(model, data),
        "whole test split, no cap (before)": lambda: evaluate_model(model, data, split="test", length_cap=None),
        "whole test split, capped (after)": lambda: evaluate_model(model, data, split="test"),
        f"first {ESTIMATE_SENTENCES} validation sentences, capped (after: a pause)": lambda: evaluate_model(
            model, data, limit=ESTIMATE_SENTENCES
        ),
    }
    cpu: dict[str, float] = {}
    wall: dict[str, float] = {}
    for name, run in runs.items():
        cpu[name], wall[name], result = timed(run)
        print(
            f"{name}: {cpu[name]:.1f} s CPU, {wall[name]:.1f} s wall, mean hypothesis {result['mean_hyp_len']} tokens"
        )
    names = list(runs)
    before = (args.pauses + 1) * cpu[names[0]] + cpu[names[2]]
    after = args.pauses * cpu[names[4]] + cpu[names[1]] + cpu[names[3]]
    print(
        f"evaluations of a hopeless run ({args.pauses} pauses, final validation + test): "
        f"before {before:.0f} s CPU, after {after:.0f} s CPU (ratio {after / before:.2f}); "
        f"load {load:.1f} -> {os.getloadavg()[0]:.1f}, {args.threads} threads, cap {TRUSTED_LENGTH_CAP}"
    )


if __name__ == "__main__":
    main()
