"""CLI `python -m reference.train`: train the reference Transformer with a grader.yml profile."""

from __future__ import annotations

import os
import time

# Before torch starts OpenMP: with the default (active) wait policy two threads run 3-5x slower
# whenever another process is busy (docs/TRAINING_RECIPE.md, shared MEASUREMENTS.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
_PROCESS_START = time.perf_counter()  # "wall time including data preparation" starts here

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402
import yaml  # noqa: E402
from torch import Tensor, nn  # noqa: E402

from assignments.transformer_mt.settings import data_settings, training_settings  # noqa: E402
from autograder.config import load_config  # noqa: E402
from mtkit.allocator import keep_heap_mapped  # noqa: E402
from mtkit.bleu import teacher_forced_bleu  # noqa: E402
from mtkit.constants import PAD_IDX  # noqa: E402
from mtkit.dataset import prepare_data  # noqa: E402
from mtkit.plots import plot_history  # noqa: E402
from mtkit.training import default_device, recipe_from_profile, save_checkpoint, seed_everything, train  # noqa: E402
from reference.evaluate import TEACHER_FORCED_KEY, evaluate_model, format_result, teacher_forced_predictions  # noqa: E402
from reference.loss import calculate_loss  # noqa: E402
from reference.masks import create_look_ahead_mask_for_attention, create_padding_mask_for_attention  # noqa: E402
from reference.model import Transformer  # noqa: E402

MODEL_KEYS = ("embedding_dim", "feed_forward_dim", "num_heads", "num_layers", "drop_prob")
CHECKPOINT_NAME, VOCAB_NAME, METRICS_NAME, LOG_NAME, PLOT_NAME = (
    "checkpoint.pt",
    "vocab.json",
    "metrics.json",
    "train_log.json",
    "curves.png",
)


def build_model(hparams: Mapping[str, Any], vocab_sizes: Mapping[str, int], max_length: int) -> Transformer:
    """The reference Transformer with a profile's sizes.

    Args:
        hparams: mapping with the MODEL_KEYS (a training profile or a checkpoint's metadata).
        vocab_sizes: {language: vocabulary size}.
        max_length: positional-table length (the assignment's sequence_length / max_length).

    Returns:
        A freshly initialised model (seed the generator first for reproducibility).
    """
    return Transformer(
        dict(vocab_sizes),
        max_length,
        int(hparams["embedding_dim"]),
        int(hparams["feed_forward_dim"]),
        int(hparams["num_heads"]),
        int(hparams["num_layers"]),
        float(hparams["drop_prob"]),
    )


def reference_recipe_fns(
    label_smoothing: float,
) -> tuple[Callable[[Tensor], Tensor], Callable[[Tensor], Tensor], Callable[[Tensor, Tensor], Tensor]]:
    """The reference's graded parts bound into the callables that mtkit.training expects.

    Args:
        label_smoothing: of the per-token CrossEntropyLoss.

    Returns:
        (src_mask_fn, tgt_mask_fn, loss_fn).
    """
    criterion = nn.CrossEntropyLoss(reduction="none", label_smoothing=label_smoothing)
    return (
        lambda src: create_padding_mask_for_attention(src, PAD_IDX),
        lambda tgt: create_look_ahead_mask_for_attention(tgt, PAD_IDX),
        lambda logits, tgt: calculate_loss(logits, tgt, criterion),
    )


def _parse_overrides(pairs: Sequence[str], profile: str) -> dict[str, Any]:
    overrides = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set expects KEY=VALUE, got {pair!r}")
        overrides[f"training.profiles.{profile}.{key.strip()}"] = yaml.safe_load(raw)  # typed like YAML
    return overrides


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reference.train", description=__doc__)
    p.add_argument("--profile", default=None, help="training profile in grader.yml (default: training.profile)")
    p.add_argument("--config", default=None, help="grader.yml to read (default: the project's)")
    p.add_argument("--out", default=None, help="output folder (default: runs/<profile>)")
    p.add_argument("--target-bleu", type=float, default=None, help="stop at this BLEU (default: threshold_bleu)")
    p.add_argument("--max-epochs", type=int, default=None, help="override the profile's max_epochs")
    p.add_argument("--time-budget", type=float, default=None, help="override time_budget_s (seconds)")
    p.add_argument("--seed", type=int, default=None, help="default: grading.seed")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any profile key, e.g. --set embedding_dim=128 (repeatable)",
    )
    p.add_argument("--data-dir", default=None, help="raw Multi30k folder (default: data.local_dir / $MULTI30K_DIR)")
    p.add_argument(
        "--expected-counts",
        default=None,
        metavar="train=N,validation=N,test=N",
        help="line counts of a test slice instead of the real 29,000/1,014/1,000",
    )
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    p.add_argument(
        "--teacher-forced",
        action="store_true",
        help="also report the original notebook's teacher-forced BLEU (labelled, not graded)",
    )
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    return p


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Prepare data, train, evaluate and write checkpoint, vocabulary, metrics and curves.

    Args:
        args: parsed command-line arguments (see `_parser`).

    Returns:
        The metrics dict that is also written to metrics.json.
    """
    keep_heap_mapped()  # large tensors stay mapped between steps (mtkit/allocator.py)
    base = load_config(args.config)
    name = training_settings(base).profile_name(args.profile)
    config = load_config(args.config, _parse_overrides(args.set, name)) if args.set else base
    training = training_settings(config)
    hparams = training.profile_hparams(name)
    seed = config.grading.seed if args.seed is None else args.seed
    target = training.threshold_bleu if args.target_bleu is None else args.target_bleu
    out = Path(args.out or f"runs/{name}")
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device(args.device) if args.device else default_device()

    counts = None
    if args.expected_counts:
        counts = {k: int(v) for k, v in (item.split("=") for item in args.expected_counts.split(","))}
    data_cfg = data_settings(config)
    data = prepare_data(
        args.data_dir or data_cfg.local_dir,
        data_cfg.tokenizer,
        data_cfg.max_length,
        data_cfg.cache_dir,
        expected_counts=counts,
    )
    prep_done = time.perf_counter() - _PROCESS_START
    print(data.summary(), f"\n(ready {prep_done:.1f} s after start)", flush=True)

    overrides: dict[str, Any] = {"seed": seed, "target_bleu": target}
    if args.max_epochs is not None:
        overrides["max_epochs"] = args.max_epochs
    if args.time_budget is not None:
        overrides["time_budget_s"] = args.time_budget
    recipe = recipe_from_profile(hparams, **overrides)
    seed_everything(seed)
    sizes = {lang: len(vocab) for lang, vocab in data.vocabs.items()}
    model = build_model(hparams, sizes, data.max_length).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"profile {name!r} on {device}: {n_params / 1e6:.1f}M parameters, {hparams}", flush=True)

    last_eval: dict[str, Any] = {}

    def evaluate(m: nn.Module) -> dict[str, Any]:
        last_eval.clear()
        last_eval.update(evaluate_model(m, data, n_examples=3))  # type: ignore[arg-type]
        return last_eval

    src_mask_fn, tgt_mask_fn, loss_fn = reference_recipe_fns(float(hparams["label_smoothing"]))
    result = train(
        model,
        data.splits["train"],
        recipe,
        src_mask_fn=src_mask_fn,
        tgt_mask_fn=tgt_mask_fn,
        loss_fn=loss_fn,
        evaluate=evaluate,
        device=device,
        progress=not args.no_progress,
        log_path=out / LOG_NAME,
    )
    final = dict(last_eval)
    if args.teacher_forced:
        split = data.splits["validation"]
        preds = teacher_forced_predictions(model, split.src, split.tgt, data.vocabs[data.tgt_language].itos)
        final[TEACHER_FORCED_KEY] = teacher_forced_bleu(preds, split.tgt_tokens)

    meta = {
        **{k: hparams[k] for k in MODEL_KEYS},
        "max_length": data.max_length,
        "vocab_sizes": sizes,
        "tokenizer": data.tokenizer,
        "src_language": data.src_language,
        "tgt_language": data.tgt_language,
        "profile": name,
        "seed": seed,
        "bleu": final.get("bleu"),
        "steps": result.steps,
    }
    save_checkpoint(out / CHECKPOINT_NAME, model, meta)
    (out / VOCAB_NAME).write_text(
        json.dumps({lang: v.to_dict() for lang, v in data.vocabs.items()}, ensure_ascii=False), encoding="utf-8"
    )
    # train() measures from its own start; add the set-up before it (imports, data, model).
    train_start = time.perf_counter() - _PROCESS_START - result.wall_s
    ttt = None if result.time_to_target_s is None else round(train_start + result.time_to_target_s, 1)
    metrics = {
        "profile": name,
        "hparams": hparams,
        "recipe": result.history["recipe"],
        "device": str(device),
        "n_params": n_params,
        "target_bleu": target,
        "reached_target": result.time_to_target_s is not None,
        "best_bleu": result.best_bleu,
        "final": final,
        "stop_reason": result.stop_reason,
        "steps": result.steps,
        "epochs": result.epochs,
        "data_prep_s": round(prep_done, 1),
        "train_wall_s": result.wall_s,
        "time_to_target_incl_prep_s": ttt,
        "total_wall_s": round(time.perf_counter() - _PROCESS_START, 1),
        "history": result.history,
    }
    (out / METRICS_NAME).write_text(json.dumps(metrics, indent=1, ensure_ascii=False), encoding="utf-8")
    plot_history(result.history, out / PLOT_NAME, title=f"reference, profile {name}", target_bleu=target)
    if final:
        print(format_result(final))
    print(
        f"best BLEU {result.best_bleu}, stop: {result.stop_reason}, {result.steps} steps / {result.epochs} epochs, "
        f"time to BLEU >= {target} incl. data prep: {ttt} s, total {metrics['total_wall_s']} s; wrote {out}",
        flush=True,
    )
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point.

    Args:
        argv: arguments (default sys.argv[1:]).

    Returns:
        0 when the target BLEU was reached, 1 otherwise.
    """
    metrics = run(_parser().parse_args(argv))
    return 0 if metrics["reached_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
