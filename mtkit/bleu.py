"""BLEU metrics on token lists: NLTK corpus BLEU (graded), sacreBLEU, the original teacher-forced figure."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nltk.translate.bleu_score import corpus_bleu as _nltk_corpus_bleu
from nltk.translate.bleu_score import sentence_bleu as _nltk_sentence_bleu
from sacrebleu.metrics import BLEU

from mtkit.constants import EOS_IDX, SPECIALS

if TYPE_CHECKING:
    from torch import Tensor

_WEIGHTS = (0.25, 0.25, 0.25, 0.25)  # uniform 1- to 4-gram weights
_SPECIALS = frozenset(SPECIALS)


def _check(hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[str]]) -> None:
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")


def ids_to_tokens(ids: Sequence[int] | Tensor, vocab_itos: Sequence[str], *, stop_at_eos: bool = True) -> list[str]:
    """Map ids to token strings, cutting at the first `<eos>` and dropping special tokens.

    Args:
        ids: token ids (a list, or anything with `.tolist()` such as a 1-D tensor).
        vocab_itos: index-to-string table whose first entries are the specials.
        stop_at_eos: stop at the first `<eos>` id (what the original did with argmax outputs).

    Returns:
        The tokens, without `<unk> <sos> <eos> <pad>`.
    """
    id_list: list[int] = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    if stop_at_eos and EOS_IDX in id_list:
        id_list = id_list[: id_list.index(EOS_IDX)]
    return [tok for tok in (vocab_itos[i] for i in id_list) if tok not in _SPECIALS]


def corpus_bleu(hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[str]]) -> float:
    """The graded metric: NLTK corpus BLEU, uniform 4-gram weights, no smoothing, 0-1 scale.

    Each hypothesis has exactly one reference. Empty hypotheses are allowed and never raise: they
    shorten the corpus (brevity penalty) and, an NLTK detail, add 1 to every n-gram order's
    denominator (NLTK uses max(1, count)). With no matching unigram at all the score is exactly
    0.0; if some higher order has no match, NLTK's unsmoothed method gives a value of about 1e-77
    (it warns; warnings are silenced here). An empty corpus scores 0.0.

    Args:
        hyps: hypothesis token lists (no specials).
        refs: reference token lists, one per hypothesis.

    Returns:
        BLEU in [0, 1].
    """
    _check(hyps, refs)
    if not hyps:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = _nltk_corpus_bleu([[list(r)] for r in refs], [list(h) for h in hyps], weights=_WEIGHTS)
    return float(score)


def sacre_bleu(hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[str]], *, smooth_method: str = "exp") -> float:
    """sacreBLEU corpus score on the same tokens, 0-1 scale (a cross-check, not the graded figure).

    Tokens are joined with single spaces and scored with `tokenize='none'`, so sacreBLEU sees
    exactly the spaCy tokens instead of re-tokenizing them (whitespace-only tokens, which spaCy
    emits for repeated spaces, vanish in the join). sacreBLEU's default 'exp' smoothing is kept;
    it only differs from NLTK's unsmoothed value when some n-gram order has no match at all,
    which does not happen on a real validation corpus.

    Args:
        hyps: hypothesis token lists.
        refs: reference token lists, one per hypothesis.
        smooth_method: sacreBLEU smoothing ('exp', 'none', 'floor', 'add-k').

    Returns:
        BLEU in [0, 1].
    """
    _check(hyps, refs)
    if not hyps:
        return 0.0
    metric = BLEU(tokenize="none", force=True, smooth_method=smooth_method)
    result = metric.corpus_score([" ".join(h) for h in hyps], [[" ".join(r) for r in refs]])
    return float(result.score) / 100.0


def teacher_forced_bleu(pred_token_lists: Sequence[Sequence[str]], ref_token_lists: Sequence[Sequence[str]]) -> float:
    """The ORIGINAL notebook's figure: mean NLTK sentence BLEU (4-gram, unsmoothed) per sentence.

    NOT the graded metric. The predictions it expects are argmax outputs of `model(src, tgt)`
    run WITH the reference target as decoder input (teacher forcing), cut at the first `<eos>`
    (see `ids_to_tokens`). Such predictions see the reference: a model with a broken look-ahead
    mask copies the next target token and scores high here while unable to translate. It is also
    a per-sentence average, where any sentence without a 4-gram match scores ~0, so it is not
    comparable with corpus BLEU. Report it only labelled as teacher-forced.

    Args:
        pred_token_lists: teacher-forced argmax token lists, one per sentence.
        ref_token_lists: reference token lists, one per sentence.

    Returns:
        Mean sentence BLEU in [0, 1]; 0.0 for no sentences.
    """
    _check(pred_token_lists, ref_token_lists)
    if not pred_token_lists:
        return 0.0
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pred, ref in zip(pred_token_lists, ref_token_lists, strict=True):
            total += float(_nltk_sentence_bleu([list(ref)], list(pred), weights=_WEIGHTS))
    return total / len(pred_token_lists)
