"""Finding the submitted checkpoint beside the notebook, and refusing what must not be read."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from assignments.transformer_mt.checkpoint_file import CheckpointRefused, find_checkpoint
from assignments.transformer_mt.settings import training_settings
from autograder.config import load_config
from autograder.sidecar_files import candidate_names

PATTERNS = training_settings(load_config()).checkpoint_names


def _notebook(folder: Path, name: str = "alice.ipynb") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("{}")
    return path


def test_generic_names_count_only_for_a_notebook_alone_in_its_folder(tmp_path: Path) -> None:
    alone = _notebook(tmp_path / "alone")
    assert [n for n, _ in candidate_names(alone, PATTERNS)][:4] == [
        "alice.pt",
        "alice.pth",
        "alice.safetensors",
        "checkpoint.pt",
    ]
    shared = _notebook(tmp_path / "shared")
    _notebook(tmp_path / "shared", "bob.ipynb")
    (tmp_path / "shared" / "checkpoint.pt").write_bytes(b"bob's weights")
    assert [n for n, _ in candidate_names(shared, PATTERNS)] == ["alice.pt", "alice.pth", "alice.safetensors"]
    with pytest.raises(CheckpointRefused, match=r"No checkpoint was found next to `alice\.ipynb`"):
        find_checkpoint(shared, PATTERNS, 10)


def test_the_first_match_is_read_with_its_digest(tmp_path: Path) -> None:
    notebook = _notebook(tmp_path)
    (tmp_path / "checkpoint.pt").write_bytes(b"generic")
    (tmp_path / "alice.pth").write_bytes(b"mine")
    found = find_checkpoint(notebook, PATTERNS, 10)
    assert (found.name, found.data) == ("alice.pth", b"mine")
    assert found.sha256 == hashlib.sha256(b"mine").hexdigest()


def test_links_and_non_files_are_refused(tmp_path: Path) -> None:
    notebook = _notebook(tmp_path)
    secret = tmp_path.parent / f"{tmp_path.name}-grader-file.py"
    secret.write_text("hidden checks")
    (tmp_path / "alice.pt").symlink_to(secret)
    with pytest.raises(CheckpointRefused, match="is a link or not a regular file"):
        find_checkpoint(notebook, PATTERNS, 10)
    (tmp_path / "alice.pt").unlink()
    os.mkfifo(tmp_path / "alice.pt")  # would block a plain open()
    with pytest.raises(CheckpointRefused, match="is a link or not a regular file"):
        find_checkpoint(notebook, PATTERNS, 10)
    (tmp_path / "alice.pt").unlink()
    (tmp_path / "alice.pt").mkdir()
    with pytest.raises(CheckpointRefused, match="is a link or not a regular file"):
        find_checkpoint(notebook, PATTERNS, 10)
    (tmp_path / "alice.pt").rmdir()
    os.link(secret, tmp_path / "alice.pt")  # a hard link hands over the grader's file just the same
    with pytest.raises(CheckpointRefused, match="hard link"):
        find_checkpoint(notebook, PATTERNS, 10)


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    notebook = _notebook(tmp_path)
    (tmp_path / "alice.pt").write_bytes(b"x" * 2_000_001)
    with pytest.raises(CheckpointRefused, match=r"`alice.pt` is 2.0 MB, more than the 2 MB"):
        find_checkpoint(notebook, PATTERNS, 2)
