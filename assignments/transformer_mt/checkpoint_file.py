"""Find and read the checkpoint a student submits next to the notebook (checkpoint mode).

The grader only reads the file's bytes here; it never deserializes them (that happens in the
sandboxed worker). Links and anything outside the notebook's folder are refused, so a
submission cannot make the grader read, and hand to student code, a file of the grader's.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from autograder.sidecar_files import candidate_names, locate_sidecar

# grader.yml's default training.checkpoint_names (the instructors' workflow passes the same names
# to the submission collector's --sidecar-names).
DEFAULT_NAMES = (
    "{stem}.pt",
    "{stem}.pth",
    "{stem}.safetensors",
    "checkpoint.pt",
    "checkpoint.pth",
    "checkpoint.safetensors",
)


class CheckpointRefused(Exception):
    """No usable checkpoint file; the message is written for the student."""


@dataclass(frozen=True)
class SubmittedCheckpoint:
    """A checkpoint file's bytes and what the report says about it."""

    name: str
    data: bytes
    sha256: str

    @property
    def size_mb(self) -> float:
        """Returns: the file size in MB (10^6 bytes)."""
        return len(self.data) / 1e6


def find_checkpoint(submission: Path, patterns: list[str], max_mb: float) -> SubmittedCheckpoint:
    """Read the checkpoint that belongs to `submission`.

    Args:
        submission: the notebook being graded.
        patterns: grader.yml's training.checkpoint_names.
        max_mb: grader.yml's training.checkpoint_max_mb.

    Returns:
        The first matching file's bytes.

    Raises:
        CheckpointRefused: none found, a link, not a regular file, or too large.
    """
    submission = Path(submission)
    found = locate_sidecar(submission, patterns)
    if found is not None:
        data = _read_regular_file(found[0], found[0].name, max_mb)
        return SubmittedCheckpoint(found[0].name, data, hashlib.sha256(data).hexdigest())
    looked_for = ", ".join(f"`{name}`" for name, _ in candidate_names(submission, patterns))
    from assignments.transformer_mt.messages import t  # student-facing, Part 2's catalogue; lazily: yaml

    raise CheckpointRefused(t("checkpoint.not_found", submission=submission.name, looked_for=looked_for))


def _read_regular_file(path: Path, name: str, max_mb: float) -> bytes:
    from assignments.transformer_mt.messages import t  # student-facing, Part 2's catalogue; lazily: yaml

    not_a_file = CheckpointRefused(t("checkpoint.not_a_file", name=name))
    try:
        # O_NOFOLLOW: the name itself must not be a link (checked on the open file, no race).
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        raise not_a_file from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise not_a_file
    if status.st_nlink > 1:  # a hard link made in the student's folder to a file the grader can read
        os.close(fd)
        raise CheckpointRefused(t("checkpoint.hard_link", name=name))
    with os.fdopen(fd, "rb") as handle:  # closes fd on every path below
        if status.st_size > max_mb * 1e6:
            raise CheckpointRefused(t("checkpoint.too_large", name=name, size_mb=status.st_size / 1e6, max_mb=max_mb))
        data = handle.read(int(max_mb * 1e6) + 1)
    if len(data) > max_mb * 1e6:  # it grew after fstat
        raise CheckpointRefused(t("checkpoint.grew", name=name, max_mb=max_mb))
    return data
