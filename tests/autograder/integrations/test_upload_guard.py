"""Uploads are read without following links; Otter's quarantine leaves it nothing of the student's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.integrations import otter_upload
from autograder.integrations.upload_guard import UnsafeFile, read_beneath, scan_upload


def upload_with_everything(folder: Path, outside: Path) -> Path:
    """A regular notebook and checkpoint, plus each kind of entry that must not be read."""
    folder.mkdir()
    outside.write_text("grader's file")
    (folder / "hw.ipynb").write_text('{"cells": []}')
    (folder / "hw.pt").write_bytes(b"weights")
    (folder / "otter.py").write_text("print('shadow')")
    (folder / ".OTTER_LOG").write_bytes(b"pickle")
    (folder / "linked.py").symlink_to(outside)
    (folder / "dangling.py").symlink_to(folder / "nowhere")
    os.link(outside, folder / "hard.py")
    os.mkfifo(folder / "pipe.ipynb")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.txt").write_text("inner")
    (folder / "sub" / "up").symlink_to(folder.parent)
    return folder


def test_scan_refuses_links_special_files_hard_links_and_otters_state(tmp_path: Path) -> None:
    folder = upload_with_everything(tmp_path / "upload", tmp_path / "secret.py")
    scan = scan_upload(folder)
    assert scan.files == ["hw.ipynb", "hw.pt", "otter.py", "sub/inner.txt"]
    assert set(scan.refused) == {".OTTER_LOG", "linked.py", "dangling.py", "hard.py", "pipe.ipynb", "sub/up"}
    assert "symbolic link" in scan.refused["linked.py"] and "hard link" in scan.refused["hard.py"]
    assert "not a regular file" in scan.refused["pipe.ipynb"] and "Otter" in scan.refused[".OTTER_LOG"]


def test_read_beneath_follows_no_link_on_the_way(tmp_path: Path) -> None:
    folder = upload_with_everything(tmp_path / "upload", tmp_path / "secret.py")
    assert read_beneath(folder, "sub/inner.txt") == b"inner"
    for name in ("linked.py", "dangling.py", "hard.py", "pipe.ipynb", "sub/up/secret.py", "../secret.py", "sub"):
        with pytest.raises(UnsafeFile):
            read_beneath(folder, name)
    with pytest.raises(UnsafeFile, match="larger"):
        read_beneath(folder, "hw.pt", max_bytes=3)


def test_quarantine_copies_the_regular_files_and_leaves_otter_a_blank_notebook(tmp_path: Path) -> None:
    folder = upload_with_everything(tmp_path / "submission", tmp_path / "secret.py")
    (folder / "tests").mkdir()
    (folder / "tests" / "q1.py").write_text("otter's own test")
    made = otter_upload.quarantine(folder, tmp_path / "private", "hw.ipynb", keep=("tests",))
    assert made.submission == tmp_path / "private" / "hw.ipynb"
    assert (
        made.submission.read_text() == '{"cells": []}' and (tmp_path / "private" / "hw.pt").read_bytes() == b"weights"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["hw.ipynb", "tests"]
    blank = json.loads((folder / "hw.ipynb").read_text())
    assert [c["cell_type"] for c in blank["cells"]] == ["markdown"]
    assert (tmp_path / "secret.py").read_text() == "grader's file", "nothing outside was touched"
    assert any("`.OTTER_LOG` was not read" in note for note in made.notes())
    assert oct((tmp_path / "private").stat().st_mode & 0o777) == "0o700"


def test_a_linked_notebook_is_graded_as_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "submission"
    folder.mkdir()
    (tmp_path / "elsewhere.ipynb").write_text('{"cells": []}')
    (folder / "hw.ipynb").symlink_to(tmp_path / "elsewhere.ipynb")
    (folder / "other.ipynb").write_text('{"cells": []}')
    made = otter_upload.quarantine(folder, tmp_path / "private", "hw.ipynb")
    assert made.submission is None, "Otter's choice stands; no other file is graded in its place"
    assert "symbolic link" in made.refused["hw.ipynb"]
    assert (folder / "hw.ipynb").is_file() and not (folder / "hw.ipynb").is_symlink()


def test_prepared_autograder_is_found_by_the_plugin(tmp_path: Path) -> None:
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "a.ipynb").write_bytes(b"\xef\xbb\xbf{}")
    (root / "submission" / "numpy.py").write_text("raise SystemExit")
    otter_upload.prepare_autograder(root)
    assert sorted(p.name for p in (root / "submission").iterdir()) == ["a.ipynb"]
    found = otter_upload.quarantine_for_plugin(root / "submission" / "a.ipynb", root)
    assert found.submission is not None and found.submission.read_bytes() == b"\xef\xbb\xbf{}", "original bytes"
    assert (root / "submission" / "a.ipynb").read_bytes() == otter_upload.blank_notebook_bytes()
