"""Benchmark: seconds per training step and user/system CPU of runtime variants, in alternating fresh processes."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

# name -> environment added to the child's. "default_malloc" is the behaviour before the
# allocator tuning; "heap" is what assignments.transformer_mt.reference.train and the training worker now do.
VARIANTS: dict[str, dict[str, str]] = {
    "default_malloc": {"MTKIT_MALLOC_DEFAULT": "1"},
    "heap": {},
    "heap_1thread": {"OMP_NUM_THREADS": "1"},
    # As the training worker runs: the steps in a thread other than the main one.
    "default_malloc_in_thread": {"MTKIT_MALLOC_DEFAULT": "1"},
    "heap_in_thread": {},
}
IN_THREAD = {"default_malloc_in_thread", "heap_in_thread"}


def child(profile: str, steps: int, warmup: int, in_thread: bool = False) -> dict[str, Any]:
    """Run warm-up + timed steps of the profile's recipe on bucketed batches in this process.

    Args:
        profile: training profile in grader.yml.
        steps: timed steps.
        warmup: untimed steps first.
        in_thread: run the steps in a new thread (started after the allocator call).

    Returns:
        s/step and the CPU (user, sys) and minor page faults of the timed steps.
    """
    sys.path.insert(0, str(REPO_ROOT))
    import torch

    from assignments.transformer_mt.reference.train import build_model, reference_recipe_fns
    from assignments.transformer_mt.settings import training_settings
    from autograder.config import load_config
    from mtkit.allocator import keep_heap_mapped
    from mtkit.batching import bucket_batches, pad_pair_batch
    from mtkit.constants import PAD_IDX
    from mtkit.dataset import prepare_data
    from mtkit.training import make_optimizer, seed_everything, train_step

    tuned = keep_heap_mapped()
    hparams = training_settings(load_config()).profile_hparams(profile)
    data = prepare_data()
    split = data.splits["train"]
    batches = bucket_batches(split.lengths(), int(hparams["batch_size"]), seed=0)
    seed_everything(0)
    model = build_model(hparams, {k: len(v) for k, v in data.vocabs.items()}, data.max_length).train()
    optimizer = make_optimizer(model, float(hparams["learning_rate"]))
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    src_mask_fn, tgt_mask_fn, loss_fn = reference_recipe_fns(float(hparams["label_smoothing"]))
    before: resource.struct_rusage | None = None
    start = 0.0

    def run_steps() -> None:
        nonlocal before, start
        for step in range(warmup + steps):
            if step == warmup:
                before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            rows = batches[step]
            src, tgt = pad_pair_batch([split.src[i] for i in rows], [split.tgt[i] for i in rows], PAD_IDX)
            train_step(
                model, optimizer, scaler, src, tgt, src_mask_fn, tgt_mask_fn, loss_fn, None, torch.device("cpu"), 1.0
            )

    if in_thread:
        thread = threading.Thread(target=run_steps)
        thread.start()
        thread.join()
    else:
        run_steps()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    assert before is not None
    return {
        "allocator_tuned": tuned,
        "threads": torch.get_num_threads(),
        "s_per_step": wall / steps,
        "user_s": after.ru_utime - before.ru_utime,
        "sys_s": after.ru_stime - before.ru_stime,
        "minor_faults": after.ru_minflt - before.ru_minflt,
        "max_rss_mb": after.ru_maxrss / 1024,
    }


def main() -> int:
    """Alternate the variants in fresh processes (same load for each pair) and print medians.

    Returns:
        0.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per run")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--rounds", type=int, default=2, help="runs per variant, alternating")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated names of VARIANTS")
    parser.add_argument("--json", default=None, help="also write every run's figures here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--in-thread", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.profile, args.steps, args.warmup, args.in_thread)))
        return 0
    names = args.variants.split(",")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", **VARIANTS[name]}
            command = [sys.executable, __file__, "--child", "--profile", args.profile]
            command += ["--steps", str(args.steps), "--warmup", str(args.warmup)]
            command += ["--in-thread"] if name in IN_THREAD else []
            load = os.getloadavg()[0]
            out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
            result = {**json.loads(out.strip().splitlines()[-1]), "load_before": load}
            runs[name].append(result)
            print(f"round {round_ + 1} {name}: {json.dumps(result)}", flush=True)
    print(f"\n{args.steps} timed steps per run, profile {args.profile}; medians over {args.rounds} runs:")
    for name, results in runs.items():

        def median(key: str, results: list[dict[str, Any]] = results) -> float:
            return statistics.median(r[key] for r in results)

        print(
            f"  {name:15s} {median('s_per_step'):.3f} s/step  user {median('user_s') / args.steps:.3f} "
            f"sys {median('sys_s') / args.steps:.3f} s/step  {median('minor_faults') / args.steps:,.0f} faults/step  "
            f"RSS {median('max_rss_mb'):.0f} MB  (load {median('load_before'):.1f})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
