"""Read a submission and its side files once, hash those bytes, and keep them in a private copy that is graded."""

# A batch decides from a digest whether a stored grade still holds, and grades later. Reading the
# file again when its turn comes would grade bytes that were never hashed (a file swapped during
# the batch and back keeps a grade it never earned). So each file is read once, here: its digest
# is taken over exactly the bytes written into a private folder, and the engine grades that copy.

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

LINK_TARGET = "not-a-regular-file"  # what a refused side file's stand-in points to (dangling)


@dataclass(frozen=True)
class Snapshot:
    """A private copy of one submission: the file to grade and the digest of its bytes."""

    path: Path  # the copy of the submission, beside the copies of its side files
    sha256: str


def _read_side_file(path: Path) -> bytes | str:
    """The bytes of a regular, singly linked side file, or why it is not read ("link" for a
    symbolic link or something not a regular file, "hardlink" for a file with other names)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return "link"
    with os.fdopen(fd, "rb") as handle:  # the checks are on the open file: no race with a swap
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            return "link"
        if status.st_nlink > 1:  # never read: it may be a grader-readable file linked in
            return "hardlink"
        return handle.read()


def read_submission(submission: Path, side_files: Sequence[Path]) -> tuple[bytes, list[tuple[str, bytes | str]], str]:
    """Read a submission and its side files once.

    Args:
        submission: the file to grade.
        side_files: from `results_store.sidecar_files` (the files its grading reads).

    Returns:
        (the submission's bytes, [(side file name, its bytes or why it was not read)], the SHA-256
        of the submission's bytes and its side files' by name).
    """
    data = submission.read_bytes()
    digest = hashlib.sha256(data)
    sides: list[tuple[str, bytes | str]] = []
    for side in side_files:
        content = _read_side_file(side)
        tagged = content if isinstance(content, bytes) else b"\0" + content.encode()
        digest.update(b"\0" + side.name.encode() + b"\0" + tagged)
        sides.append((side.name, content))
    return data, sides, digest.hexdigest()


def take(submission: Path, side_files: Sequence[Path], folder: Path) -> Snapshot:
    """Copy a submission and its side files into `folder`, hashing exactly what is copied.

    A side file that is a link or not a regular file becomes a dangling link of the same name and
    a hard-linked one an empty file with a second name, so that the engine refuses the copy with
    the message it gives for the original; neither is read.

    Args:
        submission: the file to grade.
        side_files: from `results_store.sidecar_files` (the files its grading reads).
        folder: a new folder (created here, mode 0700; must not exist).

    Returns:
        The copy and the digest of `read_submission`.
    """
    data, sides, digest = read_submission(submission, side_files)
    return Snapshot(write_copy(folder, submission.name, data, sides), digest)


def write_copy(folder: Path, name: str, data: bytes, sides: Sequence[tuple[str, bytes | str]]) -> Path:
    """Write what `read_submission` read into a new private folder (see `take`).

    Args:
        folder: a new folder (created here, mode 0700); name: the submission's file name;
        data, sides: from `read_submission`.

    Returns:
        The path of the submission's copy.
    """
    folder.mkdir(mode=0o700)
    copy = folder / name
    copy.write_bytes(data)
    for side_name, content in sides:
        target = folder / side_name
        if isinstance(content, bytes):
            target.write_bytes(content)
        elif content == "link":
            os.symlink(LINK_TARGET, target)
        else:
            target.write_bytes(b"")
            os.link(target, folder / f".{side_name}.second-name")
    return copy


class SnapshotFolder:
    """A private temporary folder (0700) for a batch's snapshots, removed with them when the `with` block ends."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="grading-snapshot-"))
        self._count = 0

    def take(self, submission: Path, side_files: Sequence[Path]) -> Snapshot:
        """Args: as `take`. Returns: the snapshot, in a new subfolder."""
        self._count += 1
        return take(submission, side_files, self.path / str(self._count))

    def __enter__(self) -> SnapshotFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
