"""Tests of assignments.transformer_mt.reference.evaluate: hand-computed BLEU, honest decoding, the extra metric."""

import math
from pathlib import Path
from typing import Any

import pytest

import assignments.transformer_mt.reference.evaluate as evaluate_module
from assignments.transformer_mt.reference.evaluate import TEACHER_FORCED_KEY, evaluate_model, format_result
from assignments.transformer_mt.reference.model import Transformer
from mtkit.dataset import encode_corpus, prepare_data
from mtkit.training import seed_everything

SMALL_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "multi30k_small"
SMALL_COUNTS = {"train": 30, "validation": 6, "test": 5}
REFS = ["the cat sat on the red mat", "a man rides a horse"]
SOURCES = ["die katze sass auf der roten matte", "ein mann reitet ein pferd"]


def hand_built_data():
    split = lambda sentences: [sentence.split() for sentence in sentences]  # noqa: E731
    pairs = list(zip(SOURCES, REFS, strict=True))
    corpus = {"train": pairs, "validation": pairs, "test": pairs[:1]}
    return encode_corpus(corpus, {"de": split, "en": split}, max_length=20)


def fake_decoder(data, hyps, seen):
    """A stand-in for the fast decoder that returns fixed hypotheses and records its inputs."""
    en = data.vocabs["en"]

    def translate(model, src_seqs, **kwargs):
        seen.append((list(src_seqs), kwargs))
        return [en.encode(hyp.split()) for hyp in hyps]

    return translate


def test_bleu_on_hand_computed_case(monkeypatch):
    data = hand_built_data()
    seen: list[Any] = []
    hyps = ["the cat sat on the mat", "a man rides a horse"]
    monkeypatch.setattr(evaluate_module, "fast_greedy_translate", fake_decoder(data, hyps, seen))
    result = evaluate_model(None, data, n_examples=1)  # type: ignore[arg-type]  # faked decoder
    # Clipped matches / hypothesis n-grams, summed over both sentences: 1-grams 11/11, 2-grams
    # (4 + 4)/(5 + 4), 3-grams (3 + 3)/(4 + 3), 4-grams (2 + 2)/(3 + 2); lengths c = 11, r = 12.
    expected = math.exp(1 - 12 / 11) * (1 * 8 / 9 * 6 / 7 * 4 / 5) ** 0.25
    assert result["bleu"] == pytest.approx(expected, rel=1e-9)
    assert result["sacrebleu"] == pytest.approx(expected, abs=1e-4)
    assert result["n_sentences"] == 2 and result["split"] == "validation"
    assert result["examples"] == [{"src": SOURCES[0], "ref": REFS[0], "hyp": hyps[0]}]
    # The decoder got the source sequences only: never a target.
    ((src_seqs, kwargs),) = seen
    assert src_seqs == data.splits["validation"].src
    assert set(kwargs) == {"max_new_tokens", "batch_size", "length_cap"} and kwargs["max_new_tokens"] == 20
    assert kwargs["length_cap"] == evaluate_module.TRUSTED_LENGTH_CAP  # the graded decoder's cost is bounded


def test_perfect_and_empty_translations(monkeypatch):
    data = hand_built_data()
    monkeypatch.setattr(evaluate_module, "fast_greedy_translate", fake_decoder(data, REFS, []))
    assert evaluate_model(None, data)["bleu"] == pytest.approx(1.0)  # type: ignore[arg-type]  # faked decoder
    monkeypatch.setattr(evaluate_module, "fast_greedy_translate", fake_decoder(data, ["", ""], []))
    empty = evaluate_model(None, data)  # type: ignore[arg-type]  # faked decoder
    assert empty["bleu"] == 0.0 and empty["mean_hyp_len"] == 0.0


def test_real_model_end_to_end_with_teacher_forced_label(tmp_path):
    data = prepare_data(SMALL_DIR, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    seed_everything(0)
    model = Transformer({lang: len(v) for lang, v in data.vocabs.items()}, data.max_length, 16, 32, 2, 1, 0.1)
    model.train()
    result = evaluate_model(model, data, teacher_forced=True, n_examples=2, max_new_tokens=10)
    assert model.training  # mode restored
    assert 0.0 <= result["bleu"] <= 1.0 and 0.0 <= result[TEACHER_FORCED_KEY] <= 1.0
    assert result["n_sentences"] == 6 and len(result["examples"]) == 2
    assert all(len(example["hyp"].split()) <= 10 for example in result["examples"])
    text = format_result(result)
    assert "NOT graded" in text and "graded" in text.splitlines()[0]
    assert evaluate_model(model, data, limit=3)["n_sentences"] == 3
