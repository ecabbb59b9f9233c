"""Benchmark of mtkit's data side: tokenization/preparation time, cache speed-up, padding waste."""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as `python bench/data_prep.py` from anywhere

import spacy  # noqa: E402
import torch  # noqa: E402

from mtkit.batching import bucket_batches, fixed_pad_pair_batch, pad_pair_batch, random_batches  # noqa: E402
from mtkit.constants import DEFAULT_MAX_LENGTH, PAD_IDX, SRC_LANGUAGE, TGT_LANGUAGE  # noqa: E402
from mtkit.corpus import load_multi30k  # noqa: E402
from mtkit.dataset import PreparedData, encode_corpus, prepare_data  # noqa: E402
from mtkit.tokenize import SPACY_MODELS, TokenizeFn, load_tokenizers  # noqa: E402

LANGS = (SRC_LANGUAGE, TGT_LANGUAGE)
P = ParamSpec("P")
T = TypeVar("T")


def timed(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> tuple[T, float]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def per_sentence_tokenizers(nlp_by_lang: Mapping[str, Callable[[str], Any]]) -> dict[str, TokenizeFn]:
    """The original notebook's way: one `nlp(sentence)` call per sentence."""

    def one_by_one(nlp: Callable[[str], Any]) -> TokenizeFn:
        return lambda sentences: [[t.text for t in nlp(s)] for s in sentences]

    return {lang: one_by_one(nlp) for lang, nlp in nlp_by_lang.items()}


def tokenize_all(tokenizers: dict[str, TokenizeFn], corpus: dict) -> float:
    """Seconds to tokenize every sentence of every split in both languages."""
    start = time.perf_counter()
    for pairs in corpus.values():
        for position, lang in enumerate(LANGS):
            tokenizers[lang]([pair[position] for pair in pairs])
    return time.perf_counter() - start


def padding_stats(batches: Sequence[Sequence[int]], src: list, tgt: list, pad: Callable) -> dict[str, float]:
    """Pad every batch with `pad` and count target padding and all padded positions."""
    tgt_pad = tgt_total = all_total = 0
    for batch in batches:
        src_tensor, tgt_tensor = pad([src[i] for i in batch], [tgt[i] for i in batch], PAD_IDX)  # (B, L) each
        tgt_pad += int((tgt_tensor == PAD_IDX).sum())
        tgt_total += tgt_tensor.numel()
        all_total += src_tensor.numel() + tgt_tensor.numel()
    return {"tgt_pad_fraction": tgt_pad / tgt_total, "positions": all_total, "batches": len(batches)}


def prepare_baseline(data_dir: str) -> PreparedData:
    """prepare_data's uncached work with per-sentence nlp(sentence) calls instead of pipe."""
    corpus = load_multi30k(data_dir)
    tokenizers = per_sentence_tokenizers({lang: spacy.blank(lang) for lang in LANGS})
    return encode_corpus(corpus, tokenizers, DEFAULT_MAX_LENGTH, tokenizer_name="blank")


def default_data_dir() -> str:
    return os.environ.get("MULTI30K_DIR") or str(REPO_ROOT.parent / "shared" / "data" / "multi30k")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", default=default_data_dir(), help="raw Multi30k folder (env MULTI30K_DIR)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--pool-size", type=int, default=6400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--model-sample",
        type=int,
        default=1000,
        help="sentences per language timed with a full trained pipeline (then extrapolated)",
    )
    args = parser.parse_args()
    print(
        f"# mtkit data benchmark: {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
        f"spaCy {spacy.__version__}; single run, timings are noisy on a shared machine"
    )

    corpus, load_seconds = timed(load_multi30k, args.data_dir)
    sentences = sum(len(pairs) for pairs in corpus.values()) * 2
    print(
        f"\n## Corpus: {', '.join(f'{k} {len(v):,}' for k, v in corpus.items())} pairs "
        f"({sentences:,} sentences), read and verified in {load_seconds:.2f} s"
    )

    # --- Tokenization and full preparation (no cache) -------------------------------------
    # Best of two alternating runs each: one run is too noisy on a shared 2-CPU machine.
    blank = load_tokenizers("blank")
    blank_nlp = {lang: spacy.blank(lang) for lang in LANGS}
    blank_tok = per_sentence_tok = float("inf")
    for _ in range(2):
        blank_tok = min(blank_tok, tokenize_all(blank, corpus))
        per_sentence_tok = min(per_sentence_tok, tokenize_all(per_sentence_tokenizers(blank_nlp), corpus))
    print("\n## Tokenization of all sentences (both languages, all splits; best of 2)")
    print(f"spacy.blank, Tokenizer.pipe (mtkit):            {blank_tok:6.2f} s")
    print(
        f"spacy.blank, nlp(sentence) one by one:          {per_sentence_tok:6.2f} s  "
        f"(x{per_sentence_tok / blank_tok:.2f} of mtkit)"
    )
    models_installed = all(importlib.util.find_spec(SPACY_MODELS[lang]) for lang in LANGS)
    model_estimate = None
    if models_installed:
        full = {lang: spacy.load(SPACY_MODELS[lang]) for lang in LANGS}
        sample = {"train": corpus["train"][: args.model_sample]}
        sample_seconds = tokenize_all(per_sentence_tokenizers(full), sample)
        model_estimate = sample_seconds * sentences / (2 * len(sample["train"]))
        print(
            f"full trained pipelines, nlp(sentence):          {model_estimate:6.2f} s  "
            f"(x{model_estimate / blank_tok:.1f}; EXTRAPOLATED from {len(sample['train'])} sentences per language)"
        )
    else:
        print(
            "full trained pipelines: not installed (de_core_news_sm/en_core_web_sm); baseline below is "
            "spacy.blank applied sentence by sentence via nlp(sentence)"
        )

    prep_blank = prep_base = float("inf")
    for _ in range(2):
        fresh, seconds = timed(prepare_data, args.data_dir, use_cache=False)
        prep_blank = min(prep_blank, seconds)
        baseline_data, seconds = timed(prepare_baseline, args.data_dir)
        prep_base = min(prep_base, seconds)
    assert baseline_data.vocabs == fresh.vocabs and baseline_data.splits == fresh.splits, "baseline differs"
    print("\n## Data preparation without cache (load, tokenize, vocab, encode; best of 2)")
    print(f"mtkit prepare_data, spacy.blank + pipe:         {prep_blank:6.2f} s")
    print(
        f"baseline, spacy.blank nlp(sentence) one by one: {prep_base:6.2f} s  "
        f"(x{prep_base / prep_blank:.2f} of mtkit; identical result)"
    )
    if model_estimate is not None:
        estimate = prep_blank - blank_tok + model_estimate
        print(
            f"baseline, full trained pipelines:               {estimate:6.2f} s  "
            f"(x{estimate / prep_blank:.1f}; ESTIMATED)"
        )

    # --- Cache ----------------------------------------------------------------------------
    with tempfile.TemporaryDirectory(prefix="mtkit-bench-cache-") as cache_dir:
        cold, cold_seconds = timed(prepare_data, args.data_dir, cache_dir=cache_dir)
        warm_runs = [timed(prepare_data, args.data_dir, cache_dir=cache_dir) for _ in range(3)]
        assert all(data.from_cache for data, _ in warm_runs) and not cold.from_cache
        assert warm_runs[0][0].splits == cold.splits
        warm_seconds = statistics.median(seconds for _, seconds in warm_runs)
        size_mb = sum(path.stat().st_size for path in Path(cache_dir).iterdir()) / 1e6
    print("\n## prepare_data with the disk cache")
    print(f"cold (prepare + write {size_mb:.1f} MB JSON):          {cold_seconds:6.2f} s")
    print(
        f"warm (read corpus + JSON, median of 3):         {warm_seconds:6.2f} s  "
        f"(x{cold_seconds / warm_seconds:.1f} faster than cold)"
    )
    print(fresh.summary())

    # --- Padding --------------------------------------------------------------------------
    train = fresh.splits["train"]
    lengths = train.lengths()
    bs = args.batch_size
    fixed = padding_stats(
        random_batches(len(train), bs, args.seed),
        train.src,
        train.tgt,
        lambda s, t, p: fixed_pad_pair_batch(s, t, p, DEFAULT_MAX_LENGTH),
    )
    rand = padding_stats(random_batches(len(train), bs, args.seed), train.src, train.tgt, pad_pair_batch)
    bucket = padding_stats(bucket_batches(lengths, bs, args.pool_size, args.seed), train.src, train.tgt, pad_pair_batch)
    print(f"\n## Padding over one train epoch (batch {bs}; src and tgt padded to one common length)")
    for label, stats in (
        ("padded to 50 (original)", fixed),
        ("random batches, padded to batch max", rand),
        (f"length-bucketed (pools of {args.pool_size}), batch max", bucket),
    ):
        print(
            f"{label:50s} target padding {stats['tgt_pad_fraction']:6.1%}, "
            f"{stats['batches']} batches, "
            f"padded positions x{stats['positions'] / fixed['positions']:.2f} of baseline"
        )


if __name__ == "__main__":
    main()
