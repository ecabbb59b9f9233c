"""Read student uploads without following links: regular, singly linked files only; Otter's state files dropped."""

# Every tool that takes files from a student (the Otter plugin and the zip's run_otter.py, the
# Gradescope picker, the instructor's collector) reads them through here. The rules:
# - a name is opened with O_NOFOLLOW, every folder on the way with O_DIRECTORY|O_NOFOLLOW from a
#   descriptor of the upload's root, so no link anywhere on the path is followed (no lstat-then-
#   open race either: the checks run on the open descriptor);
# - only regular files are read (no FIFOs, devices, sockets: /dev/zero or a FIFO cannot hang or
#   fill anything), with a size cap;
# - a file with more than one hard link is refused: a hard link made inside the student's own
#   folder to a grader-readable file would otherwise hand that file over;
# - Otter's own state files (.OTTER_LOG, a pickle Otter unpickles) are never kept.

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.i18n import t

OTTER_STATE_NAMES = frozenset({".OTTER_LOG"})
MAX_FILE_BYTES = 256 * 1024 * 1024  # a notebook or a checkpoint; larger uploads are refused
MAX_FILES = 2000  # entries walked in one upload
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class UnsafeFile(Exception):
    """A file that is not read: the message says why (for staff and student alike)."""


@dataclass
class UploadScan:
    """What an upload holds: readable files (relative POSIX paths) and refused entries with reasons."""

    files: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def _reason(status: os.stat_result) -> str | None:
    """Why an entry (by lstat) is refused, or None for a regular singly linked file / a folder."""
    mode = status.st_mode
    if stat.S_ISLNK(mode):
        return t("upload.symlink")
    if stat.S_ISDIR(mode):
        return None
    if not stat.S_ISREG(mode):
        return t("upload.special")
    if status.st_nlink > 1:
        return t("upload.hard_link")
    return None


def scan_upload(root: Path) -> UploadScan:
    """Walk an upload without following links, listing at most MAX_FILES entries.

    Args:
        root: the upload's folder (itself not a link).

    Returns:
        The readable files and the refused entries (links, special files, hard links, Otter's
        state files, entries past the limit, reported once).
    """
    scan = UploadScan()
    pending = [""]
    seen = 0
    while pending:
        relative = pending.pop()
        with os.scandir(root / relative if relative else root) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                name = f"{relative}/{entry.name}" if relative else entry.name
                seen += 1
                if seen > MAX_FILES:
                    scan.refused["…"] = t("upload.too_many", max_files=MAX_FILES)
                    return scan
                if entry.name in OTTER_STATE_NAMES:
                    scan.refused[name] = t("upload.otter_state")
                    continue
                reason = _reason(entry.stat(follow_symlinks=False))
                if reason:
                    scan.refused[name] = reason
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(name)
                else:
                    scan.files.append(name)
    scan.files.sort()
    return scan


def read_beneath(root: Path, relative: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """Read `root/relative`, following no link on the way, only a regular singly linked file.

    Args:
        root: the trusted folder the path is relative to (the upload's root).
        relative: a POSIX path inside it (no `..`).
        max_bytes: refuse larger files.

    Returns:
        The bytes.

    Raises:
        UnsafeFile: a link, a special file, a hard link, too large, missing, or `..` in the path.
    """
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafeFile(f"`{relative}`: not a path inside the upload")
    fds = [os.open(root, OPEN_DIR)]
    try:
        for part in parts[:-1]:
            try:
                fds.append(os.open(part, OPEN_DIR, dir_fd=fds[-1]))
            except OSError:
                raise UnsafeFile(f"`{relative}`: a folder on its path is missing or a link") from None
        try:
            fd = os.open(parts[-1], OPEN_FILE, dir_fd=fds[-1])
        except OSError as error:
            raise UnsafeFile(f"`{relative}` is missing or a link ({error.strerror})") from None
        status = os.fstat(fd)
        reason = _reason(status) or ("a folder" if stat.S_ISDIR(status.st_mode) else None)
        if reason:
            os.close(fd)
            raise UnsafeFile(f"`{relative}` is {reason}")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise UnsafeFile(f"`{relative}` is larger than {max_bytes // (1024 * 1024)} MB")
        return data
    finally:
        for fd in fds:
            os.close(fd)


def write_new(path: Path, data: bytes) -> None:
    """Create `path` (never an existing file or link) with `data`, readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
