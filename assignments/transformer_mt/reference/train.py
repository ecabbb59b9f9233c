"""Train the reference Transformer with one profile's settings (the CLI that reads them from grader.yml is
`python -m assignments.transformer_mt.reference_training`)."""

from __future__ import annotations

import os
import time

# Before torch starts OpenMP: with the default (active) wait policy two threads run 3-5x slower
# whenever another process is busy (docs/TRAINING_RECIPE.md, shared MEASUREMENTS.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
_PROCESS_START = time.perf_counter()  # "wall time including data preparation" starts here

import json  # noqa: E402
from collections.abc import Callable, Mapping  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402
from torch import Tensor, nn  # noqa: E402

from mtkit.allocator import keep_heap_mapped  # noqa: E402
from mtkit.constants import PAD_IDX  # noqa: E402
from mtkit.dataset import prepare_data  # noqa: E402
from mtkit.plots import plot_history  # noqa: E402
from mtkit.training import default_device, recipe_from_profile, save_checkpoint, seed_everything, train  # noqa: E402

from .evaluate import TEACHER_FORCED_KEY, evaluate_model, format_result, teacher_forced_score  # noqa: E402
from .loss import calculate_loss  # noqa: E402
from .masks import create_look_ahead_mask_for_attention, create_padding_mask_for_attention  # noqa: E402
from .model import Transformer  # noqa: E402

MODEL_KEYS = ("embedding_dim", "feed_forward_dim", "num_heads", "num_layers", "drop_prob")
CHECKPOINT_NAME = "checkpoint.pt"
VOCAB_NAME = "vocab.json"
METRICS_NAME = "metrics.json"
LOG_NAME = "train_log.json"
PLOT_NAME = "curves.png"


def model_arguments(hparams: Mapping[str, Any], vocab_sizes: Mapping[str, int], max_length: int) -> list[Any]:
    """The `Transformer(...)` constructor's positional arguments for a profile's sizes (JSON-friendly).

    Args:
        hparams: mapping with the MODEL_KEYS (a training profile or a checkpoint's metadata).
        vocab_sizes: {language: vocabulary size}.
        max_length: positional-table length (the assignment's sequence_length / max_length).

    Returns:
        [vocab_size dict, sequence_length, embedding_dim, feed_forward_dim, num_heads, num_layers, drop_prob].
    """
    sizes = [int(hparams[key]) for key in MODEL_KEYS if key != "drop_prob"]  # in the constructor's order
    return [dict(vocab_sizes), max_length, *sizes, float(hparams["drop_prob"])]


def build_model(hparams: Mapping[str, Any], vocab_sizes: Mapping[str, int], max_length: int) -> Transformer:
    """The reference Transformer with a profile's sizes.

    Args:
        hparams: mapping with the MODEL_KEYS (a training profile or a checkpoint's metadata).
        vocab_sizes: {language: vocabulary size}.
        max_length: positional-table length (the assignment's sequence_length / max_length).

    Returns:
        A freshly initialised model (seed the generator first for reproducibility).
    """
    return Transformer(*model_arguments(hparams, vocab_sizes, max_length))


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


@dataclass(frozen=True)
class TrainingRun:
    """Everything one training run of the reference reads, resolved by its caller (no grader.yml here)."""

    profile: str  # the profile's name (labels the run and the checkpoint)
    hparams: Mapping[str, Any]  # the profile's keys (MODEL_KEYS, label_smoothing, the recipe's)
    seed: int
    target_bleu: float  # stop once the validation BLEU reaches it
    out: Path  # where the checkpoint, vocabulary, metrics, log and curves go
    data_dir: str | None  # the raw Multi30k folder (None: $MULTI30K_DIR, else the download)
    tokenizer: str
    max_length: int
    cache_dir: str | None
    device: str | None = None  # "cpu" or "cuda" (None: cuda when available)
    expected_counts: dict[str, int] | None = None  # sentence counts the data must have (tests)
    recipe_overrides: dict[str, Any] = field(default_factory=dict)  # e.g. max_epochs, time_budget_s
    teacher_forced: bool = False  # also the original notebook's teacher-forced BLEU (labelled, not graded)
    progress: bool = True  # tqdm bars


def run(setup: TrainingRun) -> dict[str, Any]:
    """Prepare data, train, evaluate and write checkpoint, vocabulary, metrics and curves.

    Args:
        setup: the run's resolved settings.

    Returns:
        The metrics dict that is also written to metrics.json.
    """
    keep_heap_mapped()  # large tensors stay mapped between steps (mtkit/allocator.py)
    name, hparams, seed, target = setup.profile, setup.hparams, setup.seed, setup.target_bleu
    out = setup.out
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device(setup.device) if setup.device else default_device()

    data = prepare_data(
        setup.data_dir, setup.tokenizer, setup.max_length, setup.cache_dir, expected_counts=setup.expected_counts
    )
    prep_done = time.perf_counter() - _PROCESS_START
    print(data.summary(), f"\n(ready {prep_done:.1f} s after start)", flush=True)

    recipe = recipe_from_profile(hparams, seed=seed, target_bleu=target, **setup.recipe_overrides)
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
        progress=setup.progress,
        log_path=out / LOG_NAME,
    )
    final = dict(last_eval)
    if setup.teacher_forced:
        final[TEACHER_FORCED_KEY] = teacher_forced_score(model, data)

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
