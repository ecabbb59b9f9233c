"""Trusted evaluation: greedy-translate a split with the fast decoder and score it with BLEU."""

from __future__ import annotations

import time
from typing import Any

import torch

from mtkit.batching import pad_pair_batch
from mtkit.bleu import corpus_bleu, ids_to_tokens, sacre_bleu, teacher_forced_bleu
from mtkit.constants import PAD_IDX, SRC_LANGUAGE
from mtkit.dataset import PreparedData

from .fast_decode import LengthCap, fast_greedy_translate
from .masks import create_look_ahead_mask_for_attention, create_padding_mask_for_attention
from .model import Transformer

# Key under which the original notebook's figure is reported: the name itself says what it is.
TEACHER_FORCED_KEY = "teacher_forced_bleu_not_graded"
# Each sentence stops after ceil(1.3 x its source ids) + 8 tokens at most: no reference translation
# of Multi30k (train 29,000, validation 1,014, test 1,000 pairs) needs more, while a model that never
# emits <eos> decodes ~27 tokens per validation sentence instead of max_length (50): bounded cost.
TRUSTED_LENGTH_CAP = LengthCap(ratio=1.3, slack=8)


def teacher_forced_score(
    model: Transformer, data: PreparedData, split: str = "validation", count: int | None = None, batch_size: int = 128
) -> float:
    """The original notebook's figure: per-sentence BLEU of argmax(`model(src, tgt)`) WITH the reference as input.

    These predictions see the reference target, so the figure is only the labelled, ungraded one.

    Args:
        model: the reference Transformer.
        data: prepared data with vocabularies and the split.
        split: which split.
        count: only the split's first `count` pairs (None: all).
        batch_size: pairs per forward pass.

    Returns:
        `teacher_forced_bleu` of the argmax predictions cut at the first <eos>, specials dropped.
    """
    encoded = data.splits[split]
    src_seqs, tgt_seqs = encoded.src[:count], encoded.tgt[:count]
    tgt_itos = data.vocabs[data.tgt_language].itos
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[list[str]] = []
    try:
        with torch.inference_mode():
            for start in range(0, len(src_seqs), batch_size):
                src, tgt = pad_pair_batch(src_seqs[start : start + batch_size], tgt_seqs[start : start + batch_size])
                src, tgt = src.to(device), tgt.to(device)  # (B, L) each
                logits = model(
                    src,
                    tgt,
                    create_padding_mask_for_attention(src, PAD_IDX),
                    create_look_ahead_mask_for_attention(tgt, PAD_IDX),
                )  # (B, L, V)
                # Position i predicts target token i + 1, so row[0] is the first word.
                out.extend(ids_to_tokens(row, tgt_itos) for row in logits.argmax(-1).cpu())
    finally:
        model.train(was_training)
    return teacher_forced_bleu(out, encoded.tgt_tokens[:count])


def evaluate_model(
    model: Transformer,
    data: PreparedData,
    split: str = "validation",
    *,
    teacher_forced: bool = False,
    n_examples: int = 3,
    batch_size: int = 512,
    max_new_tokens: int | None = None,
    limit: int | None = None,
    length_cap: LengthCap | None = TRUSTED_LENGTH_CAP,
) -> dict[str, Any]:
    """Translate a whole split by greedy decoding (never seeing the targets) and score it.

    Args:
        model: the reference Transformer (any device).
        data: prepared data with vocabularies and the split.
        split: which split ("validation" is graded).
        teacher_forced: also compute the original notebook's teacher-forced per-sentence BLEU,
            reported under `TEACHER_FORCED_KEY` (never the graded figure).
        n_examples: how many (source, reference, hypothesis) triples to include.
        batch_size: sentences per decoding batch.
        max_new_tokens: generation limit; default the data's max_length (the positional table).
        limit: only the first `limit` sentences (quick looks; the graded figure uses all).
        length_cap: per-sentence generation limit from the source's length (None: max_new_tokens only).

    Returns:
        {"bleu": NLTK corpus BLEU (graded, 0-1), "sacrebleu": 0-1, "n_sentences", "decode_s",
        "mean_hyp_len", "examples": [...]} plus the teacher-forced key if requested.
    """
    encoded = data.splits[split]
    count = len(encoded) if limit is None else min(limit, len(encoded))
    src_seqs = encoded.src[:count]
    refs = encoded.tgt_tokens[:count]
    tgt_itos = data.vocabs[data.tgt_language].itos
    start = time.perf_counter()
    ids = fast_greedy_translate(
        model, src_seqs, max_new_tokens=max_new_tokens or data.max_length, batch_size=batch_size, length_cap=length_cap
    )
    decode_s = time.perf_counter() - start
    hyps = [ids_to_tokens(row, tgt_itos) for row in ids]
    result: dict[str, Any] = {
        "bleu": corpus_bleu(hyps, refs),
        "sacrebleu": sacre_bleu(hyps, refs),
        "n_sentences": count,
        "split": split,
        "decode_s": round(decode_s, 3),
        "mean_hyp_len": round(sum(map(len, hyps)) / max(count, 1), 3),
        "examples": [
            {"src": " ".join(encoded.src_tokens[i]), "ref": " ".join(refs[i]), "hyp": " ".join(hyps[i])}
            for i in range(min(n_examples, count))
        ],
    }
    if teacher_forced:
        result[TEACHER_FORCED_KEY] = teacher_forced_score(model, data, split, count)
    return result


def format_result(result: dict[str, Any]) -> str:
    """Human-readable summary of `evaluate_model` output.

    Args:
        result: the dict returned by `evaluate_model`.

    Returns:
        Multi-line text: the graded BLEU, the cross-checks, and the example translations.
    """
    lines = [
        f"{result['split']}: corpus BLEU {result['bleu']:.4f} (greedy, NLTK, graded), "
        f"sacreBLEU {result['sacrebleu']:.4f}, {result['n_sentences']} sentences, "
        f"decoding {result['decode_s']:.1f} s"
    ]
    if TEACHER_FORCED_KEY in result:
        lines.append(
            f"  original teacher-forced per-sentence BLEU (sees the reference; NOT graded): "
            f"{result[TEACHER_FORCED_KEY]:.4f}"
        )
    for example in result.get("examples", []):
        lines += [f"  {SRC_LANGUAGE}:  {example['src']}", f"  ref: {example['ref']}", f"  hyp: {example['hyp']}"]
    return "\n".join(lines)
