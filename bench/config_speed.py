"""Benchmark: CPU and wall seconds per training step and per target token of profile variants, interleaved."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP

import argparse
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/config_speed.py` from anywhere

import torch  # noqa: E402

from assignments.transformer_mt.reference.train import build_model, reference_recipe_fns  # noqa: E402
from assignments.transformer_mt.settings import training_settings  # noqa: E402
from autograder.config import load_config  # noqa: E402
from mtkit.allocator import keep_heap_mapped  # noqa: E402
from mtkit.batching import bucket_batches, pad_pair_batch  # noqa: E402
from mtkit.constants import PAD_IDX  # noqa: E402
from mtkit.dataset import prepare_data  # noqa: E402
from mtkit.training import make_optimizer, seed_everything, train_step  # noqa: E402


def parse_variant(text: str, base: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One `NAME:KEY=VALUE,KEY=VALUE` argument as the profile with those keys replaced.

    Args:
        text: the variant's specification (no keys: the profile unchanged).
        base: the profile's settings.

    Returns:
        (name, settings).
    """
    name, _, spec = text.partition(":")
    hparams = dict(base)
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        hparams[key] = type(base[key])(float(value)) if isinstance(base[key], int | float) else value
    return name, hparams


def main() -> None:
    """Take steps of every variant in turn (each with its own model, optimizer and bucketed batches, so
    all see the same machine load) and print the process CPU and wall seconds per step and per
    1,000 real target tokens, and the CPU per token relative to the first variant."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--steps", type=int, default=12, help="timed steps per variant")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per variant first")
    parser.add_argument(
        "variants", nargs="+", help="NAME:KEY=VALUE,... (profile keys, e.g. base: d128:embedding_dim=128)"
    )
    args = parser.parse_args()
    keep_heap_mapped()
    base = dict(training_settings(load_config()).profile_hparams(args.profile))
    data = prepare_data()
    split = data.splits["train"]
    lengths = split.lengths()
    sizes = {k: len(v) for k, v in data.vocabs.items()}
    state: dict[str, dict[str, Any]] = {}
    for text in args.variants:
        name, hp = parse_variant(text, base)
        seed_everything(0)
        model = build_model(hp, sizes, data.max_length).train()
        state[name] = {
            "hp": hp,
            "model": model,
            "opt": make_optimizer(model, float(hp["learning_rate"])),
            "batches": bucket_batches(lengths, int(hp["batch_size"]), seed=0, max_tokens=int(hp["max_tokens"]) or None),
            "fns": reference_recipe_fns(float(hp["label_smoothing"])),
            "cpu": 0.0,
            "wall": 0.0,
            "tokens": 0,
        }
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    for step in range(args.warmup + args.steps):
        for s in state.values():
            rows = s["batches"][step % len(s["batches"])]
            src, tgt = pad_pair_batch([split.src[i] for i in rows], [split.tgt[i] for i in rows], PAD_IDX)
            src_mask_fn, tgt_mask_fn, loss_fn = s["fns"]
            cpu0, wall0 = time.process_time(), time.perf_counter()
            train_step(
                s["model"],
                s["opt"],
                scaler,
                src,
                tgt,
                src_mask_fn,
                tgt_mask_fn,
                loss_fn,
                None,
                torch.device("cpu"),
                float(s["hp"]["clip_grad_norm"]),
            )
            if step >= args.warmup:
                s["cpu"] += time.process_time() - cpu0
                s["wall"] += time.perf_counter() - wall0
                s["tokens"] += int((tgt[:, 1:] != PAD_IDX).sum())
    print(
        f"{args.steps} interleaved steps per variant, {torch.get_num_threads()} threads, load {os.getloadavg()[0]:.1f}"
    )
    first = None
    for name, s in state.items():
        per_k = s["cpu"] / s["tokens"] * 1000
        first = first or per_k
        print(
            f"  {name:12s} CPU {s['cpu'] / args.steps:.3f} s/step, wall {s['wall'] / args.steps:.3f} s/step, "
            f"{s['tokens'] / args.steps:.0f} tokens/step, CPU {per_k:.3f} s per 1k tokens ({per_k / first:.2f}x)"
        )


if __name__ == "__main__":
    main()
