"""Multi30k (task 1, de-en) loading from local raw files or Hugging Face, with integrity checks."""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from mtkit.constants import SRC_LANGUAGE, TGT_LANGUAGE

SPLITS: tuple[str, ...] = ("train", "validation", "test")
LANGUAGES: tuple[str, ...] = (SRC_LANGUAGE, TGT_LANGUAGE)

# Raw Multi30k task-1 file stems, one file per split and language: <stem>.<lang>[.gz].
FILE_STEMS: dict[str, str] = {"train": "train", "validation": "val", "test": "test_2016_flickr"}
EXPECTED_COUNTS: dict[str, int] = {"train": 29_000, "validation": 1_014, "test": 1_000}

HF_DATASET_NAME = "bentrevett/multi30k"
ENV_DATA_DIR = "MULTI30K_DIR"

Pairs = list[tuple[str, str]]


class CorpusError(RuntimeError):
    """The corpus is missing, unreadable, incomplete or misaligned; the message says what to do."""


def resolve_local_dir(local_dir: str | Path | None = None) -> Path | None:
    """Pick the local Multi30k directory: the argument, else env MULTI30K_DIR, else None (HF).

    Args:
        local_dir: explicit directory, or None to consult the environment.

    Returns:
        The directory as a Path, or None when the Hugging Face dataset should be used.
    """
    if local_dir is not None and str(local_dir) != "":
        return Path(local_dir).expanduser()
    from_env = os.environ.get(ENV_DATA_DIR, "")
    return Path(from_env).expanduser() if from_env else None


def local_data_problem(local_dir: str | Path | None = None) -> str | None:
    """Why the corpus would not come from a complete local folder, found without reading it.

    Args:
        local_dir: explicit directory, or None to consult the environment (as `resolve_local_dir`).

    Returns:
        None for a folder with every file; the folder's problem; or "" when no folder is set (the
        Hugging Face hub would be asked, which an offline machine cannot reach).
    """
    folder = resolve_local_dir(local_dir)
    if folder is None:
        return ""
    try:
        find_local_files(folder)
    except CorpusError as error:
        return str(error)
    return None


def find_local_files(local_dir: str | Path) -> dict[str, dict[str, Path]]:
    """Locate the six raw files `<stem>.<lang>` (plain preferred over `.gz` when both exist).

    Args:
        local_dir: directory holding train/val/test_2016_flickr files for de and en.

    Returns:
        {split: {lang: path}} for every split and language.

    Raises:
        CorpusError: the directory or any file is missing.
    """
    directory = Path(local_dir).expanduser()
    if not directory.is_dir():
        raise CorpusError(
            f"Multi30k directory {str(directory)!r} does not exist. Set {ENV_DATA_DIR} or "
            "data.local_dir in grader.yml to a folder with the raw task-1 files "
            "(train.de, train.en, val.de, val.en, test_2016_flickr.de, test_2016_flickr.en, "
            "each plain or .gz)."
        )
    files: dict[str, dict[str, Path]] = {}
    for split in SPLITS:
        files[split] = {}
        for lang in LANGUAGES:
            name = f"{FILE_STEMS[split]}.{lang}"
            candidates = [directory / name, directory / f"{name}.gz"]
            found = next((path for path in candidates if path.is_file()), None)
            if found is None:
                raise CorpusError(
                    f"Multi30k file {name} (or {name}.gz) is missing in {str(directory)!r}. "
                    f"Point {ENV_DATA_DIR} or data.local_dir in grader.yml to a complete copy "
                    "of the raw Multi30k task-1 files."
                )
            files[split][lang] = found
    return files


def _decode_lines(path: Path, raw: bytes) -> list[str]:
    """Decode a raw file's bytes into lines, removing only the line terminators."""
    try:
        data = gzip.decompress(raw) if path.name.endswith(".gz") else raw
        text = data.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise CorpusError(f"Cannot read Multi30k file {str(path)!r}: {error}") from error
    # split("\n") rather than splitlines(): the latter also breaks on characters such as
    # U+2028 or \x1c that may legitimately occur inside a sentence.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the file's final newline
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _check_counts(split: str, counts: Mapping[str, int], where: Mapping[str, str], expected: int) -> None:
    """Raise CorpusError unless both languages of a split have the expected number of lines."""
    src_count, tgt_count = counts[SRC_LANGUAGE], counts[TGT_LANGUAGE]
    if src_count != tgt_count:
        raise CorpusError(
            f"Multi30k {split} split is misaligned: {where[SRC_LANGUAGE]} has {src_count} lines "
            f"but {where[TGT_LANGUAGE]} has {tgt_count}; both languages must have one sentence "
            "per line, in the same order."
        )
    for lang in LANGUAGES:
        if counts[lang] != expected:
            raise CorpusError(
                f"Multi30k {split} split has the wrong size: {where[lang]} has {counts[lang]} "
                f"lines, expected {expected}. Use the original task-1 files (train 29,000 / "
                "val 1,014 / test_2016_flickr 1,000 lines)."
            )


def _merged_counts(expected_counts: Mapping[str, int] | None) -> dict[str, int]:
    """Default split sizes, overridden by any split named in expected_counts."""
    counts = dict(EXPECTED_COUNTS)
    if expected_counts:
        unknown = set(expected_counts) - set(SPLITS)
        if unknown:
            raise ValueError(f"expected_counts has unknown splits {sorted(unknown)}; use {SPLITS}")
        counts.update(expected_counts)
    return counts


def _load_local(local_dir: Path, expected: Mapping[str, int]) -> tuple[dict[str, Pairs], str]:
    """Read and verify the local raw files; the fingerprint hashes every file's name and bytes."""
    files = find_local_files(local_dir)
    digest = hashlib.sha256(b"multi30k-local")
    corpus: dict[str, Pairs] = {}
    for split in SPLITS:
        lines: dict[str, list[str]] = {}
        for lang in LANGUAGES:
            path = files[split][lang]
            try:
                raw = path.read_bytes()
            except OSError as error:
                raise CorpusError(f"Cannot read Multi30k file {str(path)!r}: {error}") from error
            digest.update(f"{split}/{lang}/{path.name}/{len(raw)}\0".encode())
            digest.update(raw)
            lines[lang] = _decode_lines(path, raw)
        where = {lang: str(files[split][lang]) for lang in LANGUAGES}
        _check_counts(split, {lang: len(lines[lang]) for lang in LANGUAGES}, where, expected[split])
        corpus[split] = list(zip(lines[SRC_LANGUAGE], lines[TGT_LANGUAGE], strict=True))
    return corpus, digest.hexdigest()


def _load_hugging_face(expected: Mapping[str, int]) -> tuple[dict[str, Pairs], str]:
    """Load bentrevett/multi30k via `datasets`; the fingerprint combines the splits' fingerprints."""
    hint = (
        f"Set {ENV_DATA_DIR} (or data.local_dir in grader.yml) to a folder with the raw Multi30k "
        "task-1 files (train/val/test_2016_flickr .de/.en, plain or .gz) to work offline."
    )
    try:
        from datasets import load_dataset  # lazy: slow import, and only needed without local files

        dataset = load_dataset(HF_DATASET_NAME)
    except Exception as error:  # network, hub, cache and import failures all end up here
        raise CorpusError(
            f"Could not load the Hugging Face dataset {HF_DATASET_NAME!r} ({type(error).__name__}: {error}). {hint}"
        ) from error
    digest = hashlib.sha256(b"multi30k-hf")
    corpus: dict[str, Pairs] = {}
    for split in SPLITS:
        if split not in dataset:
            raise CorpusError(f"Hugging Face dataset {HF_DATASET_NAME!r} has no {split!r} split. {hint}")
        part = dataset[split]
        columns = {lang: list(part[lang]) for lang in LANGUAGES}
        where = {lang: f"{HF_DATASET_NAME}[{split}][{lang}]" for lang in LANGUAGES}
        _check_counts(split, {lang: len(columns[lang]) for lang in LANGUAGES}, where, expected[split])
        digest.update(f"{split}/{getattr(part, '_fingerprint', '')}\0".encode())
        corpus[split] = list(zip(columns[SRC_LANGUAGE], columns[TGT_LANGUAGE], strict=True))
    return corpus, digest.hexdigest()


def load_multi30k_with_fingerprint(
    local_dir: str | Path | None = None, expected_counts: Mapping[str, int] | None = None
) -> tuple[dict[str, Pairs], str]:
    """Load Multi30k like `load_multi30k` and also return a fingerprint of the input data.

    Args:
        local_dir: folder with the raw files; None falls back to env MULTI30K_DIR, then to HF.
        expected_counts: per-split line counts overriding 29,000 / 1,014 / 1,000 (for test slices).

    Returns:
        (corpus, fingerprint): the corpus as in `load_multi30k`, and a sha256 hex digest of the
        local files' bytes (or of the Hugging Face dataset fingerprints).

    Raises:
        CorpusError: missing or unreadable data, wrong line counts, or misaligned languages.
    """
    expected = _merged_counts(expected_counts)
    directory = resolve_local_dir(local_dir)
    if directory is None:
        return _load_hugging_face(expected)
    return _load_local(directory, expected)


def load_multi30k(
    local_dir: str | Path | None = None, expected_counts: Mapping[str, int] | None = None
) -> dict[str, Pairs]:
    """Load the Multi30k task-1 German-English corpus as (de, en) sentence pairs.

    Sentences are kept exactly as in the data, only line terminators are removed.

    Args:
        local_dir: folder with train/val/test_2016_flickr .de/.en files (each plain or .gz);
            None falls back to env MULTI30K_DIR, and without it to Hugging Face bentrevett/multi30k.
        expected_counts: per-split line counts overriding 29,000 / 1,014 / 1,000 (for test slices).

    Returns:
        {"train": [...], "validation": [...], "test": [...]}, each a list of (de, en) pairs.

    Raises:
        CorpusError: missing or unreadable data, wrong line counts, or misaligned languages.
    """
    corpus, _ = load_multi30k_with_fingerprint(local_dir, expected_counts)
    return corpus
