"""Benchmark: validation vs test BLEU of honest and memorising runs (sets training.memorisation_gap).

Honest runs train on the training split; a memorising run trains on the public validation pairs.
Both are scored with the grader's trusted decoder (assignments.transformer_mt.reference.evaluate) on validation
and on the test split (test_2016_flickr). Examples:

    python bench/memorisation_gap.py checkpoint runs/cpu/checkpoint.pt      # an honest run's weights
    python bench/memorisation_gap.py train --split train --steps 450 --every 150
    python bench/memorisation_gap.py train --split validation --steps 300 --every 100
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from assignments.transformer_mt.reference.evaluate import evaluate_model
from assignments.transformer_mt.reference.model import Transformer
from assignments.transformer_mt.reference.train import build_model, reference_recipe_fns
from assignments.transformer_mt.settings import training_settings
from assignments.transformer_mt.training_eval import load_data, memorisation_gap
from autograder.config import load_config
from mtkit.training import load_checkpoint, recipe_from_profile, seed_everything, train


def both_splits(model: Transformer, data, threshold: float) -> dict:
    """Validation and test BLEU of `model` with the trusted decoder, and the gap verdict."""
    start = time.perf_counter()
    validation = evaluate_model(model, data, "validation", n_examples=0)
    test = evaluate_model(model, data, "test", n_examples=0)
    return {
        **memorisation_gap(validation["bleu"], test["bleu"], threshold),
        "decode_s": {"validation": validation["decode_s"], "test": test["decode_s"]},
        "wall_s": round(time.perf_counter() - start, 1),
    }


def main() -> int:
    """Print one JSON line per evaluated model."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ckpt = sub.add_parser("checkpoint", help="score a saved reference checkpoint")
    ckpt.add_argument("path", type=Path)
    run = sub.add_parser("train", help="train the reference (cpu profile sizes) on a split and score it")
    run.add_argument("--split", default="validation", choices=["train", "validation"])
    run.add_argument("--steps", type=int, default=300)
    run.add_argument("--every", type=int, default=100, help="score both splits every N steps")
    run.add_argument("--profile", default="cpu")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a profile key, e.g. --set embedding_dim=128 (repeatable)",
    )
    args = parser.parse_args()
    config = load_config()
    threshold = training_settings(config).memorisation_gap
    data = load_data(config)
    vocab_sizes = {lang: len(v) for lang, v in data.vocabs.items()}
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if args.command == "checkpoint":
        payload = load_checkpoint(args.path)
        sizes = ("embedding_dim", "feed_forward_dim", "num_heads", "num_layers", "drop_prob")
        hparams = {
            **training_settings(config).profile_hparams("cpu"),
            **{k: v for k, v in payload.get("extra", {}).items() if k in sizes},
        }
        model = build_model(hparams, vocab_sizes, data.max_length)
        model.load_state_dict(payload["model"])
        print(json.dumps({"model": str(args.path), **both_splits(model.eval(), data, threshold)}), flush=True)
        return 0
    hparams = training_settings(config).profile_hparams(args.profile)
    for pair in args.set:
        key, _, value = pair.partition("=")
        hparams[key] = type(hparams[key])(float(value)) if isinstance(hparams[key], (int, float)) else value
    seed_everything(config.grading.seed)
    model = build_model(hparams, vocab_sizes, data.max_length)
    recipe = recipe_from_profile(
        hparams,
        max_steps=args.steps,
        max_epochs=10_000,
        lr_decay_steps=args.steps,
        eval_every_steps=args.every,
        eval_start_step=args.every,
        target_bleu=2.0,
        time_budget_s=3600,
        seed=config.grading.seed,
    )
    src_mask, tgt_mask, loss = reference_recipe_fns(float(hparams["label_smoothing"]))
    started = time.perf_counter()

    def evaluate(trained: torch.nn.Module) -> float:
        assert isinstance(trained, Transformer)  # the model built above
        scored = both_splits(trained, data, threshold)
        print(
            json.dumps(
                {
                    "trained_on": args.split,
                    "sizes": {k: hparams[k] for k in ("embedding_dim", "num_layers")},
                    "train_s": round(time.perf_counter() - started, 1),
                    **scored,
                }
            ),
            flush=True,
        )
        return scored["validation_bleu"]

    train(
        model,
        data.splits[args.split],
        recipe,
        src_mask_fn=src_mask,
        tgt_mask_fn=tgt_mask,
        loss_fn=loss,
        evaluate=evaluate,
        device="cpu",
        progress=False,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
