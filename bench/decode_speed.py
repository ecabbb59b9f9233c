"""Benchmark: greedy decoding of the validation split, reference fast decoder vs the generic one."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/decode_speed.py` from anywhere

import torch  # noqa: E402

from autograder.config import load_config  # noqa: E402
from mtkit.bleu import corpus_bleu, ids_to_tokens  # noqa: E402
from mtkit.constants import PAD_IDX  # noqa: E402
from mtkit.dataset import prepare_data  # noqa: E402
from mtkit.decoding import greedy_translate  # noqa: E402
from mtkit.training import seed_everything  # noqa: E402
from reference.fast_decode import fast_greedy_translate  # noqa: E402
from reference.masks import create_look_ahead_mask_for_attention, create_padding_mask_for_attention  # noqa: E402
from reference.train import build_model  # noqa: E402
from reference.translate import load_translator  # noqa: E402


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
        "--batch-size",
        default="128",
        help="generic decoder's batch size; a comma-separated list times each in turn",
    )
    parser.add_argument("--skip-fast", action="store_true", help="time only the generic decoder")
    args = parser.parse_args()
    load_before = os.getloadavg()
    data = prepare_data()
    if args.checkpoint:
        model, _, _ = load_translator(args.checkpoint)
        label = args.checkpoint
    else:
        seed_everything(0)
        hparams = load_config().training.profile_hparams(args.profile)
        model = build_model(hparams, {k: len(v) for k, v in data.vocabs.items()}, data.max_length)
        label = f"untrained {args.profile}-profile model"
    model.eval()
    split = data.splits["validation"]
    itos = data.vocabs[data.tgt_language].itos
    timings, cpu_times, outputs = {}, {}, {}
    runs: dict[str, Callable[[], list[list[int]]]] = {}
    if not args.skip_fast:
        runs["fast (reference.fast_decode)"] = lambda: fast_greedy_translate(
            model, split.src, max_new_tokens=data.max_length
        )
    for batch_size in (int(size) for size in args.batch_size.split(",")):
        runs[f"generic (mtkit.decoding), batch {batch_size}"] = functools.partial(
            greedy_translate,
            model,
            split.src,
            src_mask_fn=create_padding_mask_for_attention,
            tgt_mask_fn=create_look_ahead_mask_for_attention,
            max_new_tokens=data.max_length,
            batch_size=batch_size,
            pad_idx=PAD_IDX,
        )
    for name, decode in runs.items():
        start, cpu_start = time.perf_counter(), time.process_time()
        outputs[name] = decode()
        timings[name], cpu_times[name] = time.perf_counter() - start, time.process_time() - cpu_start
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
        print(
            f"  {name:40s}: {timings[name]:7.1f} s wall, {cpu_times[name]:7.1f} s CPU, mean output "
            f"length {sum(map(len, ids)) / len(ids):.1f}, BLEU {bleu:.4f}, identical to the first "
            f"run for {same}/{len(ids)} sentences"
        )


if __name__ == "__main__":
    main()
