"""Tests for mtkit.dataset: encoding and filter rules, cache hits, cache keys, real data sizes."""

import json
import time
from pathlib import Path

import pytest

from mtkit.constants import EOS_IDX, SOS_IDX, SPECIALS, UNK_IDX
from mtkit.dataset import cache_key, encode_corpus, prepare_data

SMALL_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "multi30k_small"
SMALL_COUNTS = {"train": 30, "validation": 6, "test": 5}


def whitespace_tokenizers():
    split = lambda sentences: [sentence.split() for sentence in sentences]  # noqa: E731
    return {"de": split, "en": split}


def same_content(first, second):
    return first.vocabs == second.vocabs and first.splits == second.splits and first.max_length == second.max_length


def test_encode_hand_computed():
    corpus = {"train": [("a b", "x y y"), ("b", "y")], "validation": [("b c", "y z")], "test": [("", "")]}
    data = encode_corpus(corpus, whitespace_tokenizers(), max_length=10)
    # Vocab from train only: b:2 before a:1; y:3 before x:1; c and z are unknown.
    assert data.vocabs["de"].itos == [*SPECIALS, "b", "a"]
    assert data.vocabs["en"].itos == [*SPECIALS, "y", "x"]
    train = data.splits["train"]
    assert train.src == [[SOS_IDX, 5, 4, EOS_IDX], [SOS_IDX, 4, EOS_IDX]]
    assert train.tgt == [[SOS_IDX, 5, 4, 4, EOS_IDX], [SOS_IDX, 4, EOS_IDX]]
    validation = data.splits["validation"]
    assert validation.src == [[SOS_IDX, 4, UNK_IDX, EOS_IDX]]
    assert validation.tgt_tokens == [["y", "z"]]  # references keep the real token, no specials
    assert validation.tgt_text == ["y z"] and validation.src_tokens == [["b", "c"]]
    assert data.splits["test"].src == [[SOS_IDX, EOS_IDX]]
    assert train.lengths() == [5, 3]


def test_max_length_filters_train_only_and_counts_elsewhere():
    fits, src_long, tgt_long = ("a a a", "x x x"), ("a a a a", "x"), ("a", "x x x x")
    corpus = {"train": [fits, src_long, tgt_long, fits], "validation": [src_long, fits, tgt_long], "test": [fits]}
    data = encode_corpus(corpus, whitespace_tokenizers(), max_length=5)  # 3 tokens + <sos>/<eos> = 5 fits
    train = data.splits["train"]
    assert train.indices == [0, 3] and train.n_too_long == 2 and train.filtered
    assert [len(seq) for seq in train.src] == [5, 5]
    assert train.src_text == ["a a a", "a a a"]
    validation = data.splits["validation"]
    assert validation.indices == [0, 1, 2] and validation.n_too_long == 2 and not validation.filtered
    assert [len(seq) for seq in validation.src] == [6, 5, 3]
    with pytest.raises(ValueError, match="max_length"):
        encode_corpus(corpus, whitespace_tokenizers(), max_length=1)


def test_small_slice_cache_hit_equals_fresh(tmp_path):
    fresh = prepare_data(SMALL_DIR, max_length=12, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    assert not fresh.from_cache and fresh.cache_path is not None and fresh.cache_path.parent == tmp_path
    train = fresh.splits["train"]
    assert 0 < train.n_too_long < 30 and len(train) == 30 - train.n_too_long
    assert all(len(s) <= 12 and len(t) <= 12 for s, t in zip(train.src, train.tgt, strict=True))
    assert len(fresh.splits["validation"]) == 6 and fresh.splits["validation"].n_too_long > 0
    cached = prepare_data(SMALL_DIR, max_length=12, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    assert cached.from_cache and same_content(cached, fresh)
    assert cached.splits["validation"].tgt_text == fresh.splits["validation"].tgt_text
    # One JSON file, written atomically (no temporary leftovers), never a pickle.
    files = sorted(path.name for path in tmp_path.iterdir())
    assert files == [f"multi30k-{fresh.cache_key}.json"]
    record = json.loads((tmp_path / files[0]).read_text(encoding="utf-8"))
    assert record["key"] == fresh.cache_key and set(record["splits"]) == {"train", "validation", "test"}
    assert "12" in fresh.summary() and "train: " in fresh.summary()


def test_cache_key_changes_with_every_input(tmp_path):
    base = cache_key("corpus", "kind=blank", 50)
    assert (
        len(
            {
                base,
                cache_key("corpus2", "kind=blank", 50),
                cache_key("corpus", "kind=model", 50),
                cache_key("corpus", "kind=blank", 60),
            }
        )
        == 4
    )
    slice_dir = tmp_path / "slice"
    slice_dir.mkdir()
    for path in SMALL_DIR.iterdir():
        (slice_dir / path.name).write_bytes(path.read_bytes())
    cache = tmp_path / "cache"
    first = prepare_data(slice_dir, cache_dir=cache, expected_counts=SMALL_COUNTS)
    other_length = prepare_data(slice_dir, max_length=20, cache_dir=cache, expected_counts=SMALL_COUNTS)
    test_en = slice_dir / "test_2016_flickr.en"
    test_en.write_text(test_en.read_text(encoding="utf-8").replace("A ", "One ", 1), encoding="utf-8")
    edited = prepare_data(slice_dir, cache_dir=cache, expected_counts=SMALL_COUNTS)
    assert not other_length.from_cache and not edited.from_cache
    assert len({first.cache_key, other_length.cache_key, edited.cache_key}) == 3
    assert edited.splits["test"].tgt_tokens[0][0] == "One"
    assert len(list(cache.glob("*.json"))) == 3


def test_corrupt_cache_is_rebuilt(tmp_path):
    fresh = prepare_data(SMALL_DIR, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    assert fresh.cache_path is not None
    fresh.cache_path.write_text('{"format": 1, "key": "trunc', encoding="utf-8")
    with pytest.warns(UserWarning, match="ignoring unreadable data cache"):
        rebuilt = prepare_data(SMALL_DIR, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    assert not rebuilt.from_cache and same_content(rebuilt, fresh)
    assert prepare_data(SMALL_DIR, cache_dir=tmp_path, expected_counts=SMALL_COUNTS).from_cache


def test_unwritable_cache_and_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="could not write the data cache"):
        data = prepare_data(SMALL_DIR, cache_dir=blocker / "cache", expected_counts=SMALL_COUNTS)
    assert len(data.splits["train"]) == 30 and data.cache_path is None
    monkeypatch.setenv("MTKIT_CACHE_DIR", str(tmp_path / "env_cache"))
    prepare_data(SMALL_DIR, expected_counts=SMALL_COUNTS, use_cache=False)
    assert not (tmp_path / "env_cache").exists()
    prepare_data(SMALL_DIR, expected_counts=SMALL_COUNTS)
    assert len(list((tmp_path / "env_cache").glob("multi30k-*.json"))) == 1


@pytest.fixture(scope="module")
def real_cold_and_warm(multi30k_dir, tmp_path_factory):
    cache = tmp_path_factory.mktemp("mtkit_cache")
    start = time.perf_counter()
    cold = prepare_data(multi30k_dir, cache_dir=cache)
    cold_seconds = time.perf_counter() - start
    start = time.perf_counter()
    warm = prepare_data(multi30k_dir, cache_dir=cache)
    warm_seconds = time.perf_counter() - start
    return cold, warm, cold_seconds, warm_seconds


def test_real_data_sizes(real_cold_and_warm):
    cold, _, _, _ = real_cold_and_warm
    assert (len(cold.vocabs["de"]), len(cold.vocabs["en"])) == (19_214, 10_837)
    sizes = {name: len(split) for name, split in cold.splits.items()}
    assert sizes == {"train": 29_000, "validation": 1_014, "test": 1_000}
    assert all(split.n_too_long == 0 for split in cold.splits.values())
    train = cold.splits["train"]
    assert max(map(len, train.src)) == 46 and max(map(len, train.tgt)) == 43
    assert train.tgt_tokens[0] == [
        "Two",
        "young",
        ",",
        "White",
        "males",
        "are",
        "outside",
        "near",
        "many",
        "bushes",
        ".",
    ]
    assert cold.vocabs["en"].decode(train.tgt[0][1:-1]) == train.tgt_tokens[0]
    assert UNK_IDX in {i for seq in cold.splits["validation"].src for i in seq}  # unseen words exist


def test_real_data_warm_cache_equal_and_faster(real_cold_and_warm):
    cold, warm, cold_seconds, warm_seconds = real_cold_and_warm
    assert warm.from_cache and not cold.from_cache and same_content(warm, cold)
    assert warm.splits["test"].src_text == cold.splits["test"].src_text
    assert warm_seconds < cold_seconds / 3, (warm_seconds, cold_seconds)
