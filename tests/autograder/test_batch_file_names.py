"""Any file name is graded and reported under a recognisable name, and never stops a batch or its
resume (issue 38, break 4): over-long, non-UTF-8 (CP949 from an LMS zip), Hangul (composed or
not), control characters, spaces, leading dashes and dots. The names are fuzzed from fixed seeds
(hypothesis is not in the dev lock), so a failure reproduces."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import random
import unicodedata
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.batch import STEM_BYTES, expand_paths, grade_batch
from autograder.config import load_config
from autograder.reports.files import RESERVED_STEMS, SUBMISSION_FILE_KINDS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
CONFIG = load_config(FIXTURES / "grader.yml")
PART2 = load_assignment("transformer_mt")
HANGUL = [chr(code) for code in range(0xAC00, 0xD7A4)]
SYLLABLES = frozenset(HANGUL)
NAME_MAX = 255  # bytes in one file name (ext4, APFS, NTFS in UTF-16 units)


def fake_grade(path, config, parts):
    from counting_engine import _fake  # noqa: PLC0415 - the helper module beside these tests

    return _fake(path, config, parts)


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setenv("GRADING_FAKE_SECONDS", "0")


def random_name(rng: random.Random) -> bytes:
    """A file name as bytes, of a random mix of the kinds of names LMS downloads and students make."""
    pieces: list[bytes] = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(["ascii", "hangul", "nfd", "cp949", "bytes", "control", "space", "dash", "dot", "long"])
        text = {
            "ascii": "".join(rng.choices("abcXYZ019_()[]{}'&$#@!~+=,;", k=rng.randint(1, 12))),
            "hangul": "".join(rng.choices(HANGUL, k=rng.randint(1, 5))),
            "nfd": unicodedata.normalize("NFD", "".join(rng.choices(HANGUL, k=rng.randint(1, 5)))),
            "control": "".join(chr(rng.choice([*range(1, 32), 127])) for _ in range(rng.randint(1, 3))),
            "space": " " * rng.randint(1, 3),
            "dash": "-" * rng.randint(1, 2),
            "dot": "." * rng.randint(1, 3),
            "long": rng.choice("a가") * rng.randint(60, 240),
        }.get(kind)
        if kind == "cp949":
            pieces.append("".join(rng.choices(HANGUL[:2350], k=rng.randint(1, 4))).encode("cp949", "ignore"))
        elif kind == "bytes":
            pieces.append(bytes(rng.randint(0x80, 0xFF) for _ in range(rng.randint(1, 4))))
        else:
            pieces.append(text.encode() if text is not None else b"")
    suffix = rng.choice([b".ipynb", b".py", b".IPYNB", b".ipynb"])
    stem = b"".join(pieces).replace(b"/", b"_")[: NAME_MAX - len(suffix)]
    return stem + suffix


def write_class(folder: Path, seed: int, count: int) -> list[bytes]:
    """`count` files of distinct random names (as the file system takes them) in `folder`."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    names: list[bytes] = []
    while len(names) < count:
        name = random_name(rng)
        try:
            path = os.path.join(os.fsencode(folder), name)
            with open(path, "xb") as handle:
                handle.write(f"# {seed} {len(names)}\n".encode())
        except (FileExistsError, OSError):  # a clash with an earlier name, or one the file system refuses
            continue
        names.append(name)
    return names


@pytest.mark.parametrize("seed", range(3))
def test_fuzzed_file_names_are_all_graded_reported_and_resumed(tmp_path: Path, seed: int) -> None:
    folder, out = tmp_path / "subs", tmp_path / "out"
    names = write_class(folder, seed, 40)
    # Files given one by one keep leading dots (a folder's hidden files are skipped by design).
    paths = [Path(os.fsdecode(os.path.join(os.fsencode(folder), name))) for name in names]
    submissions = expand_paths(paths)
    assert len(submissions) == len(names)
    stems = [s.stem for s in submissions]
    assert len({stem.casefold() for stem in stems}) == len(stems)  # one file each, on any file system
    for stem in stems:
        assert "." not in stem and not stem.startswith("-") and stem.casefold() not in RESERVED_STEMS
        assert len(stem.encode()) <= STEM_BYTES + 4  # `-N` for the numbered ones
        assert stem.isprintable() and stem == unicodedata.normalize("NFC", stem)
    for submission, name in zip(submissions, names, strict=True):
        submission.label.encode("utf-8")  # no surrogate left: JSON, CSV and Markdown take it
        with contextlib.suppress(UnicodeDecodeError):  # a UTF-8 name: its Hangul, composed, in the label
            hangul = [c for c in unicodedata.normalize("NFC", name.decode()) if c in SYLLABLES]
            assert [c for c in submission.label if c in SYLLABLES] == hangul, (name, submission.label)
    run = grade_batch(submissions, CONFIG, None, out, grade_function=fake_grade, assignment=PART2)
    assert len(run.results) == len(names) and len(run.graded) == len(names)
    for stem in stems:
        for kind in SUBMISSION_FILE_KINDS[:3]:  # .results.json, .json, .md
            assert (out / f"{stem}{kind}").is_file(), stem + kind
    with open(out / "gradebook.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 2 + len(names)  # the header, the points per question, a row each
    batch = json.loads((out / ".grading" / "batch.json").read_text(encoding="utf-8"))
    assert [entry["stem"] for entry in batch["submissions"]] == stems
    again = grade_batch(expand_paths(paths), CONFIG, None, out, grade_function=fake_grade, assignment=PART2)
    assert again.graded == [] and len(again.reused) == len(names)  # the resume reuses every result


def test_named_cases_of_the_issue(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path / "subs")
    os.makedirs(folder)
    names = {
        b"a" * 240 + b".ipynb": "a" * STEM_BYTES,  # 246 bytes: [Errno 36] in the store before
        "홍길동.ipynb".encode("cp949"): "홍길동",  # a CP949 zip: UnicodeEncodeError in start_batch before
        unicodedata.normalize("NFD", "김철수.ipynb").encode(): "김철수",  # macOS: decomposed Hangul
        "이영희.ipynb".encode(): "이영희",  # written as `ipynb.*` before
        "박 민수 (2).ipynb".encode(): "박_민수_2",
        b"-rf.ipynb": "rf",
        b"tab\tand\nnewline.ipynb": "tab_and_newline",
    }
    for name in names:
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(b"{}")
    submissions = expand_paths([Path(os.fsdecode(folder))])
    assert sorted(s.stem for s in submissions) == sorted(names.values())
    labels = {s.stem: s.label for s in submissions}
    assert labels["홍길동"] == "홍길동.ipynb" and labels["김철수"] == "김철수.ipynb"
    assert labels["tab_and_newline"] == "tab\ufffdand\ufffdnewline.ipynb"
    out = tmp_path / "out"
    for _ in range(2):  # grade, then resume: neither stops
        grade_batch(submissions, CONFIG, None, out, grade_function=fake_grade, assignment=PART2)
    assert {p.name for p in out.glob("*.md")} >= {f"{stem}.md" for stem in names.values()}
