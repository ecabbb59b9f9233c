"""Benchmark: wall time of the reference training (`--profile cpu`) to the first BLEU >= 0.2, data prep included."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Run the training CLI in a fresh process (by default with an empty data cache, so tokenization
    and vocabulary building are timed too) and report when the target was first reached.

    Returns:
        The training CLI's exit status (0 = target reached).
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", default=str(REPO_ROOT / "runs" / "time_to_bleu"))
    parser.add_argument("--warm-cache", action="store_true", help="reuse the normal data cache instead of a cold one")
    parser.add_argument("extra", nargs="*", help="further reference_training arguments (after --)")
    args = parser.parse_args()
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    with tempfile.TemporaryDirectory(prefix="mtkit-cold-cache-") as cold:
        if not args.warm_cache:
            env["MTKIT_CACHE_DIR"] = cold
        command = [
            sys.executable,
            "-m",
            "assignments.transformer_mt.reference_training",
            "--profile",
            args.profile,
            "--out",
            args.out,
            "--no-progress",
            *args.extra,
        ]
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        status = subprocess.run(command, cwd=REPO_ROOT, env=env).returncode
        process_wall = time.perf_counter() - start
    metrics = json.loads((Path(args.out) / "metrics.json").read_text(encoding="utf-8"))
    evals = metrics["history"]["evals"]
    print("\n=== time to BLEU ===")
    print(
        f"profile {args.profile}, {'warm' if args.warm_cache else 'cold'} data cache, "
        f"load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after (2 cores; >2 means contention)"
    )
    print(f"  data preparation (incl. imports): {metrics['data_prep_s']} s")
    for entry in evals:
        print(
            f"  step {entry['step']:5d} (epoch {entry['epoch']:.2f}): BLEU {entry['bleu']:.4f} "
            f"(sacreBLEU {entry['sacrebleu']:.4f}), decoding {entry['eval_s']:.1f} s"
        )
    per_step = metrics["train_wall_s"] / max(metrics["steps"], 1)
    print(f"  {metrics['steps']} steps, {metrics['epochs']} epochs, {per_step:.2f} s/step incl. evaluations")
    print(
        f"  first BLEU >= {metrics['target_bleu']}: "
        f"{metrics['time_to_target_incl_prep_s']} s after process start (data prep and evaluation included)"
    )
    print(f"  best BLEU {metrics['best_bleu']:.4f}; whole process {process_wall:.1f} s (incl. saving artefacts)")
    return status


if __name__ == "__main__":
    sys.exit(main())
