"""Benchmark: greedy decoding of the validation split: mtkit's generic decoder against its earlier version.

Times `mtkit.decoding.greedy_translate` as it is now and as it was at a baseline git revision (the
version before the last speed-up, loaded from git), alternated in one process on the same model,
and prints the ratio of each pair: a busy machine slows both alike, so the ratio holds where the
absolute times do not. The reference KV-cache decoder
(`assignments.transformer_mt.reference.fast_decode`) can be timed too.
With --own-lengths the current decoder is also timed with `own_lengths=True` (the template's
MultiHeadAttention, which the reference model's shares: the decoder runs over the generated
positions only) and compared with the equal-length path.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP

import argparse
import functools
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/decode_speed.py` from anywhere

import torch  # noqa: E402

from assignments.transformer_mt.reference.fast_decode import fast_greedy_translate  # noqa: E402
from assignments.transformer_mt.reference.masks import (  # noqa: E402
    create_look_ahead_mask_for_attention,
    create_padding_mask_for_attention,
)
from assignments.transformer_mt.reference.train import build_model  # noqa: E402
from assignments.transformer_mt.reference.translate import load_translator  # noqa: E402
from assignments.transformer_mt.settings import training_settings  # noqa: E402
from autograder.config import load_config  # noqa: E402
from mtkit import decoding  # noqa: E402
from mtkit.bleu import corpus_bleu, ids_to_tokens  # noqa: E402
from mtkit.constants import PAD_IDX  # noqa: E402
from mtkit.dataset import prepare_data  # noqa: E402
from mtkit.training import seed_everything  # noqa: E402

# mtkit/decoding.py before the shrinking-batch projection reuse and the one-row output-layer probe.
BASELINE_REV = "aed694ee72df4450703a7a56a125f90a7f6199bb"


def load_baseline(rev: str) -> types.ModuleType | None:
    """mtkit/decoding.py as it was at git revision `rev`, as a module (None when git cannot give it).

    Args:
        rev: a git revision of this repository.

    Returns:
        The module, or None (a note is printed) outside a git checkout or for an unknown revision.
    """
    try:
        source = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "show", f"{rev}:mtkit/decoding.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"note: no baseline ({rev}: {exc}); timing the current decoder only", file=sys.stderr)
        return None
    module = types.ModuleType("baseline_decoding")
    exec(compile(source, f"{rev[:10]}:mtkit/decoding.py", "exec"), module.__dict__)  # our own history
    return module


def main() -> None:
    """Time the decoders on the full validation split with the same model and compare outputs."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="trained checkpoint.pt (default: an untrained cpu-profile model, which never "
        "emits <eos> early: the worst case, every sentence runs to max_length)",
    )
    parser.add_argument("--profile", default="cpu")
    parser.add_argument(
        "--batch-size", default="128", help="generic decoder's batch size; a comma-separated list times each in turn"
    )
    parser.add_argument("--skip-fast", action="store_true", help="do not time the reference fast decoder")
    parser.add_argument(
        "--baseline-rev",
        default=BASELINE_REV,
        help="git revision whose mtkit/decoding.py is the baseline ('' = no baseline)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="alternated baseline/current pairs per batch size")
    parser.add_argument(
        "--own-lengths", action="store_true", help="also time greedy_translate(own_lengths=True) against the current"
    )
    args = parser.parse_args()
    load_before = os.getloadavg()
    data = prepare_data()
    if args.checkpoint:
        model, _, _ = load_translator(args.checkpoint)
        label = args.checkpoint
    else:
        seed_everything(0)
        hparams = training_settings(load_config()).profile_hparams(args.profile)
        model = build_model(hparams, {k: len(v) for k, v in data.vocabs.items()}, data.max_length)
        label = f"untrained {args.profile}-profile model"
    model.eval()
    split = data.splits["validation"]
    itos = data.vocabs[data.tgt_language].itos
    baseline = load_baseline(args.baseline_rev) if args.baseline_rev else None
    timings: dict[str, list[float]] = {}
    cpu_times: dict[str, list[float]] = {}
    outputs: dict[str, list[list[int]]] = {}

    def timed(name: str, decode: Callable[[], list[list[int]]]) -> None:
        start, cpu_start = time.perf_counter(), time.process_time()
        outputs[name] = decode()
        timings.setdefault(name, []).append(time.perf_counter() - start)
        cpu_times.setdefault(name, []).append(time.process_time() - cpu_start)

    if not args.skip_fast:
        timed(
            "fast (assignments.transformer_mt.reference.fast_decode)",
            lambda: fast_greedy_translate(model, split.src, max_new_tokens=data.max_length),
        )
    pairs: list[tuple[str, str]] = []  # (current, baseline) names
    for batch_size in (int(size) for size in args.batch_size.split(",")):
        versions = {"current": decoding, **({"baseline": baseline} if baseline else {})}
        runs: dict[str, Callable[[], list[list[int]]]] = {
            f"{version} mtkit.decoding, batch {batch_size}": functools.partial(
                module.greedy_translate,
                model,
                split.src,
                src_mask_fn=create_padding_mask_for_attention,
                tgt_mask_fn=create_look_ahead_mask_for_attention,
                max_new_tokens=data.max_length,
                batch_size=batch_size,
                pad_idx=PAD_IDX,
            )
            for version, module in versions.items()
        }
        own_name = f"current own_lengths, batch {batch_size}"
        if args.own_lengths:
            runs[own_name] = functools.partial(
                decoding.greedy_translate,
                model,
                split.src,
                src_mask_fn=create_padding_mask_for_attention,
                tgt_mask_fn=create_look_ahead_mask_for_attention,
                max_new_tokens=data.max_length,
                batch_size=batch_size,
                pad_idx=PAD_IDX,
                own_lengths=True,
            )
        for _ in range(max(1, args.repeat)):
            for name, decode in runs.items():  # alternated: current, baseline, current, ...
                timed(name, decode)
        current_name = f"current mtkit.decoding, batch {batch_size}"
        if baseline:
            pairs.append((current_name, f"baseline mtkit.decoding, batch {batch_size}"))
        if args.own_lengths:
            pairs.append((own_name, current_name))
    load_after = os.getloadavg()
    print(
        f"{len(split)} validation sentences, {label}, {torch.get_num_threads()} threads, "
        f"{os.cpu_count()} CPUs, load average (1/5/15 min) before "
        f"{'/'.join(f'{x:.1f}' for x in load_before)}, after {'/'.join(f'{x:.1f}' for x in load_after)}"
    )
    first = next(iter(outputs.values()))
    for name, ids in outputs.items():
        bleu = corpus_bleu([ids_to_tokens(row, itos) for row in ids], split.tgt_tokens)
        same = sum(a == b for a, b in zip(first, ids, strict=True))
        walls, cpus = timings[name], cpu_times[name]
        print(
            f"  {name:44s}: median {statistics.median(walls):6.1f} s wall (runs: "
            f"{', '.join(f'{w:.1f}' for w in walls)}), {statistics.median(cpus):6.1f} s CPU, mean output "
            f"length {sum(map(len, ids)) / len(ids):.1f}, BLEU {bleu:.4f}, identical to the first "
            f"decoder's for {same}/{len(ids)} sentences"
        )
    for current, base in pairs:
        wall = [c / b for c, b in zip(timings[current], timings[base], strict=True)]
        cpu = [c / b for c, b in zip(cpu_times[current], cpu_times[base], strict=True)]
        print(
            f"  ratio {current} / {base}: wall median "
            f"{statistics.median(wall):.3f} (pairs: {', '.join(f'{r:.3f}' for r in wall)}), CPU median "
            f"{statistics.median(cpu):.3f}"
        )


if __name__ == "__main__":
    main()
