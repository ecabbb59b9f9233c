"""Tests for mtkit.corpus: real Multi30k, a small slice, gz/plain files and the error cases."""

import gzip
import shutil
from pathlib import Path

import pytest

from mtkit import corpus
from mtkit.corpus import CorpusError, load_multi30k, load_multi30k_with_fingerprint

SMALL_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "multi30k_small"
SMALL_COUNTS = {"train": 30, "validation": 6, "test": 5}


def copy_small(destination: Path) -> Path:
    shutil.copytree(SMALL_DIR, destination)
    return destination


def test_real_data_counts_alignment_and_text(multi30k_dir):
    data = load_multi30k(multi30k_dir)
    assert {name: len(pairs) for name, pairs in data.items()} == {"train": 29_000, "validation": 1_014, "test": 1_000}
    assert data["train"][0] == (
        "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
        "Two young, White males are outside near many bushes.",
    )
    assert data["validation"][-1][1] == "Two women wearing red and a man coming out of a port-a-potty."
    every_sentence = [s for pairs in data.values() for pair in pairs for s in pair]
    assert not any("\n" in s or "\r" in s for s in every_sentence)
    # Text is kept as is: 40 German training lines end with a space in the raw files.
    assert sum(de.endswith(" ") for de, _ in data["train"]) == 40


def test_env_var_fallback(multi30k_dir, monkeypatch):
    monkeypatch.setenv("MULTI30K_DIR", str(SMALL_DIR))
    data = load_multi30k(expected_counts=SMALL_COUNTS)
    assert len(data["train"]) == 30
    # An explicit argument wins over the environment variable.
    assert len(load_multi30k(multi30k_dir)["train"]) == 29_000


def test_small_slice_plain_equals_gzip(tmp_path):
    plain = load_multi30k(SMALL_DIR, expected_counts=SMALL_COUNTS)
    assert [len(plain[name]) for name in ("train", "validation", "test")] == [30, 6, 5]
    assert plain["validation"][0] == (
        "Eine Gruppe von Männern lädt Baumwolle auf einen Lastwagen",
        "A group of men are loading cotton onto a truck",
    )
    zipped_dir = tmp_path / "zipped"
    zipped_dir.mkdir()
    for path in SMALL_DIR.iterdir():
        (zipped_dir / f"{path.name}.gz").write_bytes(gzip.compress(path.read_bytes()))
    zipped, zipped_print = load_multi30k_with_fingerprint(zipped_dir, SMALL_COUNTS)
    assert zipped == plain
    assert zipped_print != load_multi30k_with_fingerprint(SMALL_DIR, SMALL_COUNTS)[1]


def test_partial_expected_counts_keep_defaults():
    with pytest.raises(CorpusError, match="expected 29000"):
        load_multi30k(SMALL_DIR, expected_counts={"validation": 6, "test": 5})
    with pytest.raises(ValueError, match="unknown splits"):
        load_multi30k(SMALL_DIR, expected_counts={"dev": 6})


def test_fingerprint_tracks_file_bytes(tmp_path):
    directory = copy_small(tmp_path / "slice")
    _, before = load_multi30k_with_fingerprint(directory, SMALL_COUNTS)
    _, again = load_multi30k_with_fingerprint(directory, SMALL_COUNTS)
    test_en = directory / "test_2016_flickr.en"
    test_en.write_text(test_en.read_text(encoding="utf-8").replace("A ", "The ", 1), encoding="utf-8")
    _, after = load_multi30k_with_fingerprint(directory, SMALL_COUNTS)
    assert before == again != after


def test_crlf_and_missing_final_newline(tmp_path):
    directory = copy_small(tmp_path / "slice")
    (directory / "test_2016_flickr.de").write_bytes(b"a b \r\nc\r\nd\re\r\nf\r\ng")
    data = load_multi30k(directory, expected_counts=SMALL_COUNTS)
    # Only line terminators go: the trailing space and a lone \r inside a line stay.
    assert [de for de, _ in data["test"]] == ["a b ", "c", "d\re", "f", "g"]


def test_missing_directory_and_file(tmp_path):
    with pytest.raises(CorpusError, match=r"does not exist.*MULTI30K_DIR"):
        load_multi30k(tmp_path / "nowhere")
    directory = copy_small(tmp_path / "slice")
    (directory / "val.en").unlink()
    with pytest.raises(CorpusError, match=r"val\.en \(or val\.en\.gz\) is missing"):
        load_multi30k(directory, expected_counts=SMALL_COUNTS)


def test_misaligned_and_wrong_counts(tmp_path):
    directory = copy_small(tmp_path / "slice")
    train_en = directory / "train.en"
    train_en.write_text("".join(train_en.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"misaligned.*train\.de has 30 lines but .*train\.en has 29"):
        load_multi30k(directory, expected_counts=SMALL_COUNTS)
    with pytest.raises(CorpusError, match=r"train\.de has 30 lines, expected 31"):
        load_multi30k(SMALL_DIR, expected_counts={**SMALL_COUNTS, "train": 31})


def test_undecodable_file(tmp_path):
    directory = copy_small(tmp_path / "slice")
    (directory / "val.de").write_bytes(b"\xff\xfe broken\n" * 6)
    with pytest.raises(CorpusError, match=r"Cannot read Multi30k file .*val\.de"):
        load_multi30k(directory, expected_counts=SMALL_COUNTS)


def test_hugging_face_failure_is_a_clear_corpus_error(monkeypatch):
    import datasets

    def unreachable(*args, **kwargs):
        raise ConnectionError("hub unreachable")

    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    with pytest.raises(CorpusError, match=r"bentrevett/multi30k.*hub unreachable.*MULTI30K_DIR.*grader\.yml"):
        load_multi30k()


def test_hugging_face_columns_are_read_and_checked(monkeypatch):
    import datasets

    rows = {"train": 3, "validation": 2, "test": 1}

    class FakeSplit(dict):
        _fingerprint = "abc"

    def fake_load(name):
        assert name == corpus.HF_DATASET_NAME
        return {
            split: FakeSplit(de=[f"de {split} {i}" for i in range(n)], en=[f"en {split} {i}" for i in range(n)])
            for split, n in rows.items()
        }

    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    data, fingerprint = load_multi30k_with_fingerprint(expected_counts=rows)
    assert data["validation"] == [("de validation 0", "en validation 0"), ("de validation 1", "en validation 1")]
    assert len(fingerprint) == 64
    with pytest.raises(CorpusError, match=r"bentrevett/multi30k\[train\]\[de\] has 3 lines, expected 29000"):
        load_multi30k()
