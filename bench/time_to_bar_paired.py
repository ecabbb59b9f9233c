"""Benchmark: the reference training's time to BLEU >= 0.2, this checkout against another commit, in turns.

Each round runs `bench/time_to_bleu.py` of the other commit (a detached `git worktree` in a temporary
folder, this interpreter, its own code first on PYTHONPATH) and then this checkout's, each in a fresh
process with a cold data cache. Rounds alternate which side goes first, so a load that drifts during
the run weighs on both. Reported per side: time to the bar (from process start, data preparation and
evaluations included, as the training command records it), process wall, and the children's CPU
seconds (user, system); then the ratio this/other per round and its median.

Usage: python bench/time_to_bar_paired.py --vs 1f40c6c [--rounds 3] [--profile cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: also when imported, not run as a script
from worktree import detached_worktree

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Run:
    """One training run's figures."""

    side: str  # "this" or "other"
    time_to_bar_s: float | None  # None: the run ended without reaching the bar
    wall_s: float
    user_s: float
    sys_s: float
    load_before: float


def run_once(side: str, root: Path, profile: str, out: Path) -> Run:
    """Run one side's time-to-BLEU bench in a fresh process and read what its training recorded.

    Args:
        side: the label ("this" or "other").
        root: the checkout whose code runs.
        profile: the grader.yml profile to train.
        out: where the training writes its artefacts (metrics.json).

    Returns:
        The run's figures.
    """
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_WAIT_POLICY": "PASSIVE"}
    command = [sys.executable, str(root / "bench" / "time_to_bleu.py"), "--profile", profile, "--out", str(out)]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=root, env=env, stdout=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    reached = metrics.get("time_to_target_incl_prep_s")
    return Run(
        side=side,
        time_to_bar_s=float(reached) if reached is not None else None,
        wall_s=wall,
        user_s=after.ru_utime - before.ru_utime,
        sys_s=after.ru_stime - before.ru_stime,
        load_before=load,
    )


def describe(run: Run) -> str:
    """Returns: one line for a run."""
    bar = f"{run.time_to_bar_s:7.1f} s" if run.time_to_bar_s is not None else "not reached"
    return (
        f"  {run.side:5s}  to the bar {bar}   process {run.wall_s:7.1f} s   "
        f"CPU user {run.user_s:6.1f} s  sys {run.sys_s:5.1f} s   load before {run.load_before:.1f}"
    )


def main() -> int:
    """Run the rounds and print every run, each round's ratio and the medians.

    Returns:
        0, or 1 when a run did not reach the bar.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vs", required=True, help="the other commit (any git revision)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default="cpu")
    args = parser.parse_args()
    runs: list[tuple[Run, Run]] = []
    with tempfile.TemporaryDirectory(prefix="time-to-bar-") as scratch, detached_worktree(args.vs) as other_root:
        for index in range(args.rounds):
            sides = [("other", other_root), ("this", REPO_ROOT)]
            if index % 2:
                sides.reverse()
            measured = {
                side: run_once(side, root, args.profile, Path(scratch) / f"{side}-{index}") for side, root in sides
            }
            runs.append((measured["this"], measured["other"]))
            print(f"round {index + 1}:", flush=True)
            for side, _ in sides:
                print(describe(measured[side]), flush=True)
    if any(run.time_to_bar_s is None for pair in runs for run in pair):
        print("a run did not reach the bar: no ratio")
        return 1
    ratios = [float(this.time_to_bar_s or 0.0) / float(other.time_to_bar_s or 1.0) for this, other in runs]
    cpu_ratios = [(this.user_s + this.sys_s) / (other.user_s + other.sys_s) for this, other in runs]
    print(f"\nthis checkout vs {args.vs}, profile {args.profile}, {args.rounds} rounds (2 cores)")
    for name, index in (("this", 0), ("other", 1)):
        times = [float(pair[index].time_to_bar_s or 0.0) for pair in runs]
        print(f"  {name:5s} median time to the bar {statistics.median(times):.1f} s", end=" ")
        print(f"(min {min(times):.1f}, max {max(times):.1f})")
    for label, values in (("time to the bar", ratios), ("CPU seconds", cpu_ratios)):
        listed = ", ".join(f"{value:.2f}" for value in values)
        print(f"  ratio this/other, {label}: {listed} (median {statistics.median(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
