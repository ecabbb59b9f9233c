"""Tests for mtkit.tokenize: blank spaCy tokenizers, batch = per-sentence, model-kind errors."""

import importlib.util

import pytest
import spacy

from mtkit.tokenize import TokenizerError, load_tokenizers, tokenizer_fingerprint


@pytest.fixture(scope="module")
def blank():
    return load_tokenizers("blank")


def test_blank_tokens_hand_checked(blank):
    assert set(blank) == {"de", "en"}
    assert blank["en"](["A man's dog, running.", "Two young, White males."]) == [
        ["A", "man", "'s", "dog", ",", "running", "."],
        ["Two", "young", ",", "White", "males", "."],
    ]
    assert blank["de"](["Ein Mann z.B. läuft."]) == [["Ein", "Mann", "z.B.", "läuft", "."]]
    assert blank["en"]([]) == []
    assert blank["en"]([""]) == [[]]


def test_batch_equals_sentence_by_sentence(blank):
    sentences = [
        "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche. ",
        "Mehrere Männer mit Schutzhelmen bedienen ein Antriebsradsystem.",
        "Ein  Hund (braun) springt über 3,5 m-hohe Zäune!",
    ]
    nlp = spacy.blank("de")
    assert blank["de"](sentences) == [[token.text for token in nlp(s)] for s in sentences]
    assert blank["de"](iter(sentences)) == blank["de"](sentences)  # any iterable works


def test_unknown_kind():
    with pytest.raises(ValueError, match="Unknown tokenizer kind"):
        load_tokenizers("whitespace")
    with pytest.raises(ValueError):
        tokenizer_fingerprint("whitespace")


@pytest.mark.skipif(importlib.util.find_spec("de_core_news_sm") is not None, reason="model is installed")
def test_model_kind_missing_gives_actionable_error():
    with pytest.raises(TokenizerError, match=r"de_core_news_sm.*python -m spacy download de_core_news_sm.*'blank'"):
        load_tokenizers("model")


def test_fingerprint_names_kind_and_versions():
    assert tokenizer_fingerprint("blank") == f"kind=blank;spacy={spacy.__version__}"
    model_print = tokenizer_fingerprint("model")
    assert model_print.startswith("kind=model;") and "de_core_news_sm=" in model_print
