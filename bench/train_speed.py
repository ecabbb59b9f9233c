"""Benchmark: training tokens/s with length-bucketed batches vs the original's fixed padding to 50."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP

import argparse
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/train_speed.py` from anywhere

import torch  # noqa: E402

from assignments.transformer_mt.reference.train import build_model, reference_recipe_fns  # noqa: E402
from assignments.transformer_mt.settings import training_settings  # noqa: E402
from autograder.config import load_config  # noqa: E402
from mtkit.batching import bucket_batches, fixed_pad_pair_batch, pad_pair_batch, random_batches  # noqa: E402
from mtkit.constants import PAD_IDX  # noqa: E402
from mtkit.dataset import prepare_data  # noqa: E402
from mtkit.training import make_optimizer, seed_everything, train_step  # noqa: E402


def main() -> None:
    """Interleave steps of two identical models, one fed bucketed batches and one fed batches padded
    to 50, so that both see the same machine load; print real (non-pad) target tokens/s and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per variant")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per variant first")
    args = parser.parse_args()
    hparams = training_settings(load_config()).profile_hparams(args.profile)
    data = prepare_data()
    train_split = data.splits["train"]
    lengths = train_split.lengths()
    bs = int(hparams["batch_size"])
    variants = {
        # The grader's batching: sorted pools, each batch padded to its own longest sequence.
        "bucketed": (bucket_batches(lengths, bs, seed=0, max_tokens=hparams["max_tokens"] or None), pad_pair_batch),
        # The original notebook: shuffled batches of batch_size, every sequence padded to max_length.
        "fixed_50": (random_batches(len(lengths), bs, seed=0), fixed_pad_pair_batch),
    }
    src_mask_fn, tgt_mask_fn, loss_fn = reference_recipe_fns(float(hparams["label_smoothing"]))
    state: dict[str, dict[str, Any]] = {}
    for name in variants:
        seed_everything(0)
        model = build_model(hparams, {k: len(v) for k, v in data.vocabs.items()}, data.max_length)
        state[name] = {
            "model": model.train(),
            "opt": make_optimizer(model, float(hparams["learning_rate"])),
            "seconds": 0.0,
            "tokens": 0,
            "padded": 0,
        }
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    for step in range(args.warmup + args.steps):
        for name, (batches, pad) in variants.items():
            rows = batches[step % len(batches)]
            src, tgt = pad([train_split.src[i] for i in rows], [train_split.tgt[i] for i in rows], PAD_IDX)
            s = state[name]
            start = time.perf_counter()
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
                float(hparams["clip_grad_norm"]),
            )
            if step >= args.warmup:
                s["seconds"] += time.perf_counter() - start
                s["tokens"] += int((tgt != PAD_IDX).sum())
                s["padded"] += tgt.numel()
    print(
        f"profile {args.profile}: d={hparams['embedding_dim']} ff={hparams['feed_forward_dim']} "
        f"layers={hparams['num_layers']} heads={hparams['num_heads']} batch={bs} max_tokens={hparams['max_tokens']}, "
        f"{args.steps} interleaved steps each, {torch.get_num_threads()} threads"
    )
    rate = {}
    for name, s in state.items():
        rate[name] = s["tokens"] / s["seconds"]
        print(
            f"  {name:9s}: {rate[name]:8.0f} target tokens/s, {s['seconds'] / args.steps:.3f} s/step, "
            f"padding {1 - s['tokens'] / s['padded']:.0%} of target positions"
        )
    print(f"  speed-up of bucketing over fixed padding to 50: {rate['bucketed'] / rate['fixed_50']:.2f}x")


if __name__ == "__main__":
    main()
