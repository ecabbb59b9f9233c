"""Benchmark: how many reference trainings can share one device before each one slows by more than a bound."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
TRAIN_MODULE = "assignments.transformer_mt.reference_training"  # the reference training, configured by grader.yml


def seconds_per_step(metrics: dict[str, Any]) -> float | None:
    """Args: one run's metrics.json. Returns: training wall seconds per optimiser step (None: no step)."""
    steps = int(metrics.get("steps") or 0)
    return float(metrics["train_wall_s"]) / steps if steps else None


def run_together(count: int, train_args: list[str], out: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Start `count` trainings at once and wait for all of them.

    Args:
        count: how many trainings share the device.
        train_args: `python -m assignments.transformer_mt.reference_training` arguments (without --out).
        out: a folder; run i writes its artifacts to out/run-i.
        env: the processes' environment.

    Returns:
        Each run's metrics.json, with its exit code under "exit_code" (a run that wrote none: {}).
    """
    out.mkdir(parents=True, exist_ok=True)
    processes = []
    for index in range(count):
        folder = out / f"run-{index}"
        log = (out / f"run-{index}.log").open("w", encoding="utf-8")
        command = [sys.executable, "-m", TRAIN_MODULE, *train_args, "--out", str(folder), "--no-progress"]
        processes.append((folder, log, subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=log)))
    results = []
    for folder, log, process in processes:
        code = process.wait()
        log.close()
        metrics_file = folder / "metrics.json"
        metrics = json.loads(metrics_file.read_text(encoding="utf-8")) if metrics_file.is_file() else {}
        results.append({**metrics, "exit_code": code})
    return results


def summarise(count: int, runs: list[dict[str, Any]], alone: float | None) -> dict[str, Any]:
    """One row of the table.

    Args:
        count: trainings that shared the device.
        runs: their metrics (run_together).
        alone: the median seconds per step of one training alone (None for the first row).

    Returns:
        count, median seconds per step, slowdown against `alone`, median time to the target
        (data preparation included; None when a run did not reach it), and failed runs.
    """
    per_step = [s for s in (seconds_per_step(r) for r in runs if r.get("exit_code") in (0, 1)) if s is not None]
    median_step = statistics.median(per_step) if per_step else None
    reached = [r["time_to_target_incl_prep_s"] for r in runs if r.get("reached_target")]
    return {
        "trainings": count,
        "s_per_step": median_step,
        "slowdown": (median_step / alone) if (median_step is not None and alone) else None,
        "time_to_target_s": statistics.median(reached) if len(reached) == len(runs) else None,
        "failed": sum(1 for r in runs if not r or r.get("exit_code") not in (0, 1) or "steps" not in r),
    }


def main(argv: list[str] | None = None) -> int:
    """Train 1, then 2, 4, ... reference models at once on one device, until each one's step is more
    than --max-slowdown times slower than alone (or --counts runs out). Prints a row per count and
    writes them to OUT/device_share.json.

    Args:
        argv: command-line arguments (default: sys.argv[1:]).

    Returns:
        0 when every run started and finished; 1 when a run failed.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="gpu", help="grader.yml training profile (default: gpu)")
    parser.add_argument("--device", default="cuda", help="device every training uses (default: cuda)")
    parser.add_argument("--counts", default="1,2,4,8", help="trainings at once, in order (first: alone)")
    parser.add_argument("--max-slowdown", type=float, default=1.5, help="stop once a step is this much slower")
    parser.add_argument("--out", default=None, help="folder for the runs (default: a temporary one)")
    parser.add_argument("train_args", nargs="*", help="further training-command arguments (after --)")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",") if c.strip()]
    out = Path(args.out or tempfile.mkdtemp(prefix="device-share-"))
    out.mkdir(parents=True, exist_ok=True)
    # One data cache for every run (filled by the first), and one CPU thread each: the device
    # does the work, and CPU threads competing for the cores would be measured as device sharing.
    env = {
        **os.environ,
        "MTKIT_CACHE_DIR": os.environ.get("MTKIT_CACHE_DIR", str(out / "cache")),
        "OMP_NUM_THREADS": "1",
        "OMP_WAIT_POLICY": "PASSIVE",
    }
    train_args = ["--profile", args.profile, "--device", args.device, *args.train_args]
    rows: list[dict[str, Any]] = []
    alone: float | None = None
    failed = 0
    for count in counts:
        started = time.monotonic()
        runs = run_together(count, train_args, out / f"together-{count}", env)
        row = summarise(count, runs, alone)
        row["wall_s"] = round(time.monotonic() - started, 1)
        rows.append(row)
        failed += row["failed"]
        alone = alone if alone is not None else row["s_per_step"]
        step = "-" if row["s_per_step"] is None else f"{row['s_per_step']:.4f}"
        slow = "-" if row["slowdown"] is None else f"{row['slowdown']:.2f}x"
        target = "-" if row["time_to_target_s"] is None else f"{row['time_to_target_s']:.1f}"
        print(
            f"{count} at once: {step} s/step (slowdown {slow}), time to target {target} s, "
            f"failed {row['failed']}, wall {row['wall_s']} s",
            flush=True,
        )
        if row["slowdown"] is not None and row["slowdown"] > args.max_slowdown:
            break
    (out / "device_share.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(f"rows written to {out / 'device_share.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
