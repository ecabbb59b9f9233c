"""Model-agnostic training recipe: bucketed batches, Adam + warm-up schedule, eval-driven early stop."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from mtkit.batching import bucket_batches, pad_pair_batch
from mtkit.constants import PAD_IDX

# Re-exported: the recipe side is part of this module's public API.
from mtkit.recipe import (
    LR_SCHEDULES,
    PRECISIONS,
    Recipe,
    is_hopeless,
    lr_factor,
    recipe_from_profile,
    resolve_profile_name,
)

__all__ = [
    "LR_SCHEDULES",
    "PRECISIONS",
    "EvalFn",
    "LossFn",
    "MaskFn",
    "PairData",
    "Recipe",
    "TrainResult",
    "default_device",
    "is_hopeless",
    "load_checkpoint",
    "lr_factor",
    "make_optimizer",
    "recipe_from_profile",
    "resolve_profile_name",
    "save_checkpoint",
    "seed_everything",
    "train",
    "train_step",
]

# This module runs inside the untrusted worker on a student's model, so it implements no graded
# part: the masks and the masked loss are callables supplied by the caller.
MaskFn = Callable[[Tensor], Tensor]  # ids (B, L) -> mask (B, 1, L, L), nonzero = may attend
LossFn = Callable[[Tensor, Tensor], Tensor]  # (logits (B, L, V), tgt (B, L)) -> scalar
EvalFn = Callable[[nn.Module], "float | Mapping[str, Any]"]  # -> BLEU (0-1) or {"bleu": ..., ...}


class PairData(Protocol):
    """Parallel id sequences with <sos>/<eos>, e.g. `mtkit.dataset.EncodedSplit`."""

    @property
    def src(self) -> Sequence[Sequence[int]]: ...

    @property
    def tgt(self) -> Sequence[Sequence[int]]: ...


@dataclass
class TrainResult:
    """What a run did: its history, best BLEU and when (if ever) the target was reached."""

    history: dict[str, Any]  # {"losses": [...], "evals": [...], "recipe": {...}, ...}
    best_bleu: float | None
    time_to_target_s: float | None  # wall seconds since train() started, incl. evaluations
    steps: int
    epochs: float  # fractional: 1.5 = halfway through the second epoch
    stop_reason: str  # target | hopeless | time_budget | max_steps | lr_schedule_end | max_epochs
    wall_s: float = 0.0
    final_eval: dict[str, Any] | None = field(default=None)


def seed_everything(seed: int) -> None:
    """Seed Python's and torch's generators (call before building the model for reproducible init).

    Args:
        seed: the seed.
    """
    random.seed(seed)
    torch.manual_seed(seed)


def default_device() -> torch.device:
    """cuda when available, else cpu."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_optimizer(
    model: nn.Module, lr: float, betas: tuple[float, float] = (0.9, 0.98), eps: float = 1e-9
) -> torch.optim.Adam:
    """Adam over the model's parameters, fused (one kernel for all tensors) where possible.

    Args:
        model: the module.
        lr: initial learning rate (the schedule overwrites it every step).
        betas: Adam's betas.
        eps: Adam's epsilon.

    Returns:
        The optimizer.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    try:
        # Measured ~5% faster per step on CPU than the per-tensor loop; same update rule.
        return torch.optim.Adam(params, lr=lr, betas=betas, eps=eps, fused=True)
    except (RuntimeError, ValueError):  # e.g. parameters of a dtype/device the fused kernel lacks
        return torch.optim.Adam(params, lr=lr, betas=betas, eps=eps)


def _autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    if precision == "fp32":
        return None
    if precision == "auto":
        # CPU: bf16 autocast measured slower (docs/TRAINING_RECIPE.md). CUDA without bf16: fp32,
        # because the assignment's masked_fill(mask == 0, -1e10) overflows fp16 and raises.
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return None
    return torch.bfloat16 if precision == "bf16" else torch.float16


def save_checkpoint(path: str | Path, model: nn.Module, extra: Mapping[str, Any] | None = None) -> Path:
    """Save the model's state_dict plus JSON-like metadata (loadable with weights_only=True).

    Args:
        path: target file (parent folders are created).
        model: the module.
        extra: plain metadata (numbers, strings, lists, dicts), e.g. hyperparameters.

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save({"model": state, "extra": dict(extra or {})}, path)
    return path


def load_checkpoint(
    path: str | Path, model: nn.Module | None = None, map_location: str | torch.device = "cpu"
) -> dict[str, Any]:
    """Load a checkpoint written by `save_checkpoint` safely (torch.load with weights_only=True).

    Args:
        path: the file.
        model: if given, its weights are replaced (strict key match).
        map_location: where tensors are loaded.

    Returns:
        {"model": state_dict, "extra": metadata}.
    """
    payload: dict[str, Any] = torch.load(Path(path), map_location=map_location, weights_only=True)
    if model is not None:
        model.load_state_dict(payload["model"])
    return payload


def _normalise_eval(value: float | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(value, Mapping):
        if "bleu" not in value:
            raise ValueError("the evaluate callback must return a float or a mapping with key 'bleu'")
        return {k: v for k, v in value.items() if isinstance(v, (int, float, str, bool, type(None)))}
    return {"bleu": float(value)}


class _Run:
    """Mutable state of one train() call; keeps `train` itself short."""

    def __init__(self, recipe: Recipe, log_path: Path | None) -> None:
        self.recipe, self.log_path = recipe, log_path
        self.start = time.perf_counter()
        self.step, self.epoch_progress = 0, 0.0
        self.losses: list[dict[str, Any]] = []
        self.evals: list[dict[str, Any]] = []
        self.window: list[float] = []
        self.window_tokens = 0
        self.window_start = self.start
        self.last_lr = recipe.learning_rate
        self.best: float | None = None
        self.time_to_target: float | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def record_loss(self, loss: float, tokens: int, lr: float) -> None:
        self.window.append(loss)
        self.window_tokens += tokens
        self.last_lr = lr
        if len(self.window) >= self.recipe.log_every_steps:
            self.flush()

    def flush(self) -> None:
        """Append the mean loss of the current window (if any) to the log."""
        if not self.window:
            return
        now = time.perf_counter()
        self.losses.append(
            {
                "step": self.step,
                "epoch": round(self.epoch_progress, 4),
                "loss": sum(self.window) / len(self.window),
                "lr": self.last_lr,
                "wall_s": round(now - self.start, 3),
                "tokens_per_s": round(self.window_tokens / max(now - self.window_start, 1e-9), 1),
            }
        )
        self.window, self.window_tokens, self.window_start = [], 0, now
        self.write_log()  # a few KB: lets a long run be watched from outside

    def record_eval(self, result: dict[str, Any], eval_s: float) -> bool:
        """Store an evaluation; True when it reaches the target."""
        entry = {
            "step": self.step,
            "epoch": round(self.epoch_progress, 4),
            **result,
            "eval_s": round(eval_s, 3),
            "wall_s": round(self.elapsed(), 3),
        }
        self.evals.append(entry)
        bleu = float(result["bleu"])
        self.best = bleu if self.best is None else max(self.best, bleu)
        target = self.recipe.target_bleu
        hit = target is not None and bleu >= target
        if hit and self.time_to_target is None:
            self.time_to_target = entry["wall_s"]
        self.write_log()
        return hit

    def history(self) -> dict[str, Any]:
        return {
            "recipe": asdict(self.recipe),
            "losses": self.losses,
            "evals": self.evals,
            "best_bleu": self.best,
            "time_to_target_s": self.time_to_target,
            "steps": self.step,
            "epochs": round(self.epoch_progress, 4),
            "wall_s": round(self.elapsed(), 3),
        }

    def write_log(self, **extra: Any) -> None:
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self.log_path.write_text(json.dumps({**self.history(), **extra}, indent=1), encoding="utf-8")


def train(
    model: nn.Module,
    data: PairData,
    recipe: Recipe,
    *,
    src_mask_fn: MaskFn,
    tgt_mask_fn: MaskFn,
    loss_fn: LossFn,
    evaluate: EvalFn | None = None,
    device: torch.device | str | None = None,
    progress: bool = True,
    log_path: str | Path | None = None,
    pad_idx: int = PAD_IDX,
) -> TrainResult:
    """Train `model` with the recipe; evaluate with the callback and stop early at the target BLEU.

    The model is called as `model(src, tgt, src_mask_fn(src), tgt_mask_fn(tgt))` (the
    assignment's Transformer.forward) on batches of similar length, both sides padded to one
    common length L. On CPU with a fixed seed the loss sequence is reproducible.

    Args:
        model: the encoder-decoder; moved to `device` and left in train mode.
        data: training pairs (`.src`, `.tgt`: id lists with <sos>/<eos>).
        recipe: optimisation settings (see `Recipe`).
        src_mask_fn: src ids (B, L) -> padding mask (B, 1, L, L).
        tgt_mask_fn: tgt ids (B, L) -> look-ahead mask (B, 1, L, L).
        loss_fn: (logits (B, L, V), tgt (B, L)) -> scalar loss to minimise.
        evaluate: model -> BLEU (or a mapping with "bleu"); called per epoch, or every
            `eval_every_steps` from `eval_start_step` on, and once at the end if the last step
            was not evaluated. Its time counts towards the wall clock and the budget.
        device: default cuda if available, else cpu.
        progress: show a tqdm bar per epoch.
        log_path: JSON log (rewritten after every evaluation and at the end).
        pad_idx: padding id.

    Returns:
        TrainResult.
    """
    from tqdm.auto import tqdm  # lazy: keeps `import mtkit.training` light in the worker

    device = torch.device(device) if device is not None else default_device()
    run = _Run(recipe, Path(log_path) if log_path is not None else None)
    torch.manual_seed(recipe.seed)  # dropout stream; the model's init is the caller's business
    model.to(device).train()
    optimizer = make_optimizer(model, recipe.learning_rate, recipe.adam_betas, recipe.adam_eps)
    amp_dtype = _autocast_dtype(recipe.precision, device)
    # fp16 gradients underflow without loss scaling; bf16 has fp32's exponent range.
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype is torch.float16)
    lengths = [max(len(s), len(t)) for s, t in zip(data.src, data.tgt, strict=True)]  # common padded length

    def epoch_batches(epoch: int) -> list[list[int]]:
        return bucket_batches(
            lengths,
            recipe.batch_size,
            recipe.pool_size,
            seed=recipe.seed * 1_000_003 + epoch,
            max_tokens=recipe.max_tokens or None,
        )

    total_steps = recipe.max_steps or recipe.max_epochs * len(epoch_batches(0))
    # Linear/cosine schedules end at lr 0: steps after that cannot change the model. A decay over the
    # whole run (lr_decay_steps 0) ends with the last epoch, which the loop ends anyway (max_epochs).
    decays = recipe.lr_schedule in ("linear", "cosine") and 0 < recipe.lr_decay_steps < total_steps
    schedule_end = recipe.lr_decay_steps if decays else 0
    stop_reason, last_eval_step = "max_epochs", -1

    def run_eval() -> bool:
        nonlocal last_eval_step
        last_eval_step = run.step
        t0 = time.perf_counter()
        model.eval()
        try:
            result = _normalise_eval(evaluate(model))  # type: ignore[misc]
        finally:
            model.train()
        hit = run.record_eval(result, time.perf_counter() - t0)
        if progress:
            tqdm.write(
                f"step {run.step} epoch {run.epoch_progress:.2f}: BLEU {result['bleu']:.4f} ({run.elapsed():.0f} s)"
            )
        return hit

    for epoch in range(recipe.max_epochs):
        batches = epoch_batches(epoch)
        bar = tqdm(
            batches,
            desc=f"epoch {epoch + 1}/{recipe.max_epochs}",
            disable=not progress,
            leave=False,
            dynamic_ncols=True,
        )
        stop = False
        for i, rows in enumerate(bar):
            lr = recipe.learning_rate * lr_factor(run.step, recipe, total_steps)
            for group in optimizer.param_groups:
                group["lr"] = lr
            src, tgt = pad_pair_batch([data.src[r] for r in rows], [data.tgt[r] for r in rows], pad_idx)
            src, tgt = src.to(device), tgt.to(device)  # (B, L) each
            loss = train_step(
                model,
                optimizer,
                scaler,
                src,
                tgt,
                src_mask_fn,
                tgt_mask_fn,
                loss_fn,
                amp_dtype,
                device,
                recipe.clip_grad_norm,
            )
            run.step += 1
            run.epoch_progress = epoch + (i + 1) / len(batches)
            run.record_loss(loss, int((tgt != pad_idx).sum()), lr)
            bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.2e}", refresh=False)
            if (
                evaluate is not None
                and recipe.eval_every_steps > 0
                and run.step >= recipe.eval_start_step
                and run.step % recipe.eval_every_steps == 0
                and run_eval()
            ):
                stop_reason = "target"
            elif last_eval_step == run.step and is_hopeless(run.step, run.best, recipe):
                stop_reason = "hopeless"
            elif recipe.max_steps and run.step >= recipe.max_steps:
                stop_reason = "max_steps"
            elif schedule_end and run.step >= schedule_end:
                stop_reason = "lr_schedule_end"
            elif recipe.time_budget_s and run.elapsed() >= recipe.time_budget_s:
                stop_reason = "time_budget"
            stop = stop_reason != "max_epochs"
            if stop:
                break
        bar.close()
        if stop:
            break
        if evaluate is not None and recipe.eval_every_steps <= 0 and run_eval():
            stop_reason = "target"
            break
        if last_eval_step == run.step and is_hopeless(run.step, run.best, recipe):
            stop_reason = "hopeless"
            break
    run.flush()
    if evaluate is not None and last_eval_step != run.step and run.step > 0 and run_eval():
        stop_reason = "target"
    final = run.evals[-1] if run.evals else None
    run.write_log(stop_reason=stop_reason)
    return TrainResult(
        history={**run.history(), "stop_reason": stop_reason},
        best_bleu=run.best,
        time_to_target_s=run.time_to_target,
        steps=run.step,
        epochs=round(run.epoch_progress, 4),
        stop_reason=stop_reason,
        wall_s=round(run.elapsed(), 3),
        final_eval=final,
    )


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    src: Tensor,
    tgt: Tensor,
    src_mask_fn: MaskFn,
    tgt_mask_fn: MaskFn,
    loss_fn: LossFn,
    amp_dtype: torch.dtype | None,
    device: torch.device,
    clip: float,
) -> float:
    """One optimizer step on a batch (also used by bench/train_speed.py).

    Args:
        model: the model in train mode.
        optimizer: its optimizer.
        scaler: a GradScaler (enabled only for fp16).
        src: (B, L) source ids on `device`.
        tgt: (B, L) target ids on `device`.
        src_mask_fn: see `train`.
        tgt_mask_fn: see `train`.
        loss_fn: see `train`.
        amp_dtype: autocast dtype, or None for full precision.
        device: the device (selects the autocast backend).
        clip: gradient-norm clipping threshold (0 = off).

    Returns:
        The loss as a float.
    """
    src_mask = src_mask_fn(src).to(device)  # (B, 1, L, L)
    tgt_mask = tgt_mask_fn(tgt).to(device)  # (B, 1, L, L)
    autocast = torch.autocast(device.type, dtype=amp_dtype) if amp_dtype is not None else nullcontext()
    with autocast:
        logits = model(src, tgt, src_mask, tgt_mask)  # (B, L, V)
    # The loss runs outside autocast in fp32: log-softmax over ~10k classes is precision-sensitive.
    loss = loss_fn(logits.float(), tgt)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    if clip > 0:
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    scaler.step(optimizer)
    scaler.update()
    return float(loss.detach())
