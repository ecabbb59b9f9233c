"""Tests for mtkit.bleu on hand-checkable cases."""

import math

import pytest
import torch

from mtkit.bleu import corpus_bleu, ids_to_tokens, sacre_bleu, teacher_forced_bleu

HYP1 = ["a", "man", "is", "riding", "a", "horse"]
REF1 = ["a", "man", "is", "riding", "a", "brown", "horse", "today"]
HYP2 = REF2 = ["two", "dogs", "play", "in", "the", "snow"]


def test_perfect_is_one():
    refs = [REF1, REF2]
    assert corpus_bleu(refs, refs) == pytest.approx(1.0)
    assert sacre_bleu(refs, refs) == pytest.approx(1.0)
    assert teacher_forced_bleu(refs, refs) == pytest.approx(1.0)


def test_disjoint_is_zero():
    hyps = [["x", "y", "z", "w"], ["q", "r", "s", "t"]]
    assert corpus_bleu(hyps, [REF1, REF2]) == 0.0
    assert teacher_forced_bleu(hyps, [REF1, REF2]) == 0.0


def test_single_sentence_by_hand():
    # Clipped matches: 1-grams 6/6, 2-grams 4/5, 3-grams 3/4, 4-grams 2/3; c = 6, r = 8.
    expected = math.exp(1 - 8 / 6) * (1 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25
    assert corpus_bleu([HYP1], [REF1]) == pytest.approx(expected, rel=1e-9)
    assert sacre_bleu([HYP1], [REF1]) == pytest.approx(expected, abs=1e-6)


def test_corpus_pools_counts_instead_of_averaging():
    # Pooled over both sentences: p1 = 12/12, p2 = 9/10, p3 = 7/8, p4 = 5/6; c = 12, r = 14.
    expected = math.exp(1 - 14 / 12) * (1 * 9 / 10 * 7 / 8 * 5 / 6) ** 0.25
    assert corpus_bleu([HYP1, HYP2], [REF1, REF2]) == pytest.approx(expected, rel=1e-9)
    assert sacre_bleu([HYP1, HYP2], [REF1, REF2]) == pytest.approx(expected, abs=1e-6)
    # The original per-sentence average is a different number for the same pair.
    single = math.exp(1 - 8 / 6) * (1 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25
    assert teacher_forced_bleu([HYP1, HYP2], [REF1, REF2]) == pytest.approx((single + 1.0) / 2, rel=1e-9)


def test_empty_hypotheses_do_not_raise():
    assert corpus_bleu([[]], [REF1]) == 0.0
    assert corpus_bleu([[], []], [REF1, REF2]) == 0.0
    mixed = corpus_bleu([[], HYP2], [REF1, REF2])
    # NLTK quirk: an empty hypothesis adds 1 to every n-gram denominator (max(1, count)), and its
    # closest reference length (8) to r. So p = 6/7, 5/6, 4/5, 3/4 with c = 6, r = 14.
    assert mixed == pytest.approx(math.exp(1 - 14 / 6) * (6 / 7 * 5 / 6 * 4 / 5 * 3 / 4) ** 0.25, rel=1e-9)
    assert 0.0 <= sacre_bleu([[], HYP2], [REF1, REF2]) < 1.0
    assert teacher_forced_bleu([[], HYP2], [REF1, REF2]) == pytest.approx(0.5)
    assert corpus_bleu([], []) == 0.0 and teacher_forced_bleu([], []) == 0.0


def test_length_mismatch_raises():
    with pytest.raises(ValueError):
        corpus_bleu([HYP1], [REF1, REF2])


def test_ids_to_tokens_strips_specials_and_stops_at_eos():
    itos = ["<unk>", "<sos>", "<eos>", "<pad>", "a", "dog", "runs"]
    assert ids_to_tokens([1, 4, 0, 5, 6, 2, 4, 4], itos) == ["a", "dog", "runs"]
    assert ids_to_tokens(torch.tensor([4, 3, 5]), itos) == ["a", "dog"]
    assert ids_to_tokens([4, 2, 5], itos, stop_at_eos=False) == ["a", "dog"]
