"""Tests for mtkit.vocab: ordering rules, unknown handling, JSON round trip."""

import pytest

from mtkit.constants import PAD_IDX, SOS_IDX, SPECIALS, UNK_IDX
from mtkit.vocab import Vocab, build_vocab


def test_order_specials_then_frequency_then_alphabetical():
    sentences = [["b", "a", "c", "a"], ["c", "B", "d"], ["a", "é", "Z"]]
    vocab = build_vocab(sentences)
    # a:3, c:2, then count 1 in code-point order: "B" < "Z" < "b" < "d" < "é"
    assert vocab.itos == ["<unk>", "<sos>", "<eos>", "<pad>", "a", "c", "B", "Z", "b", "d", "é"]
    assert vocab.stoi["a"] == 4 and vocab["é"] == 10
    assert SPECIALS.index("<pad>") == PAD_IDX == vocab.stoi["<pad>"]


def test_specials_in_data_are_not_duplicated():
    vocab = build_vocab([["<pad>", "x", "<unk>", "x"]])
    assert vocab.itos == [*SPECIALS, "x"]


def test_min_freq_and_custom_specials():
    vocab = build_vocab([["a", "b", "a"]], specials=["<unk>", "<sos>"], min_freq=2)
    assert vocab.itos == ["<unk>", "<sos>", "a"]


def test_encode_unknown_and_decode():
    vocab = build_vocab([["the", "dog", "the"]])
    assert vocab.encode(["the", "cat", "dog"]) == [4, UNK_IDX, 5]
    assert vocab["cat"] == UNK_IDX and "cat" not in vocab and "dog" in vocab
    assert vocab.decode([SOS_IDX, 4, 5]) == ["<sos>", "the", "dog"]
    with pytest.raises(IndexError):
        vocab.decode([6])
    with pytest.raises(IndexError):
        vocab.decode([-1])
    assert len(vocab) == 6


def test_json_round_trip_keeps_unicode_and_order():
    vocab = build_vocab([["Straße", "über", '"quoted"', "über"]])
    text = vocab.to_json()
    assert "Straße" in text  # stored as UTF-8, not \\u escapes
    again = Vocab.from_json(text)
    assert again == vocab and again.itos == vocab.itos and again.stoi == vocab.stoi
    assert again.encode(["über", "nope"]) == [4, UNK_IDX]


def test_rejects_duplicates():
    with pytest.raises(ValueError, match="unique"):
        Vocab(["<unk>", "a", "a"])
