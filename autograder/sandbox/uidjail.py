"""The jail without namespaces (a root grader in a default container): a fresh uid the grader's files are closed to."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from autograder.sandbox.treewatch import start_time
from autograder.worker_runtime.guards import is_under
from autograder.worker_runtime.jail import drop_privileges

# Closed to other users in this mode besides the grader packages: Gradescope's and Otter's
# container layout (the zip with the hidden checks, the upload, the results).
CONTAINER_PATHS = ("/autograder",)
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock")  # any uid may write there
# path -> mode before this process changed it (the tests put them back; a grader does not)
CHANGED: dict[str, int] = {}
_kept: list[str] = []  # what the workers of this process need (left open)
_closed: set[str] = set()  # what this process closed


def _set_mode(path: str, clear: int = 0, add: int = 0) -> None:
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    if (mode & ~clear) | add != mode:
        CHANGED.setdefault(path, mode)
        os.chmod(path, (mode & ~clear) | add)


def _close(path: str, keep: list[str]) -> None:
    """Take other users' access to `path` away, but the way down to the kept dirs under it
    (traverse only, no listing), down to each kept dir itself, which stays as it is."""
    if path in keep or os.path.islink(path) or not os.path.exists(path):
        return  # a link's target is not ours to close (chmod would follow it)
    inner = [k for k in keep if is_under(k, [path])]
    if not inner:
        _set_mode(path, clear=0o007)
        return
    _set_mode(path, clear=0o006, add=0o001)
    for entry in os.scandir(path):
        _close(entry.path, inner)


def close_to_workers(paths: Iterable[str | Path]) -> None:
    """Close paths to the sandbox users at once (runs as root; e.g. the CLI's uploads and report
    folder, when it knows its workers will run in this jail).

    Args:
        paths: files or folders no worker may read.
    """
    real = {os.path.realpath(p) for p in paths}
    _closed.update(real)
    for path in sorted(real):
        _close(path, _kept)


def seal(hidden: Sequence[str], keep: Sequence[str]) -> None:
    """Make this host fit for workers under a bare uid (runs as root): open the way to what a
    worker needs and close the rest of the grader's files to every user but root.

    Args:
        hidden: the project and the grader packages (plan.hidden_paths()).
        keep: dirs the worker imports from or reads (the Python dirs, data dirs, its sandbox).
    """
    new = sorted({os.path.realpath(k) for k in keep} - set(_kept))
    _kept.extend(new)
    for path in new:  # e.g. a Python under /root (0700): others may traverse to it, not list
        for parent in Path(path).parents:
            _set_mode(str(parent), add=0o001)
    # closed before, around a dir now kept (e.g. uploads beside the venv): its way down was opened
    reopened = [path for path in _closed if any(is_under(k, [path]) for k in new)]
    close_to_workers([*hidden, *CONTAINER_PATHS, *reopened])


def kill_user(uid: int) -> None:
    """SIGKILL every process of `uid` (a worker's own uid: nothing else runs as it), however it
    left the worker's tree (setsid, double fork): a child that becomes `uid` sends kill(-1),
    which reaches every process of that uid but itself, and no fork completes meanwhile.

    Args:
        uid: the sandbox uid.
    """
    for _ in range(5):
        pid = os.fork()  # not Popen(user=): exec fails for a uid over its RLIMIT_NPROC (fork bomb)
        if pid == 0:
            try:
                drop_privileges(uid)  # as the worker itself became it
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if not any(_owner(int(name)) == uid for name in os.listdir("/proc") if name.isdigit()):
            break
    _remove_files_of(uid)


def _remove_files_of(uid: int, dirs: Sequence[str] = SHARED_WRITABLE, depth: int = 2) -> None:
    """Delete what `uid` left in the world-writable dirs (the only places besides its sandbox it
    can write to; and their world-writable subdirs), so that nothing of a worker outlives it."""
    for top in dirs if depth else ():
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if info.st_uid == uid and stat.S_ISDIR(info.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)  # fd-based: follows no link
                elif info.st_uid == uid:
                    os.unlink(entry.path)
                elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH:
                    _remove_files_of(uid, [entry.path], depth - 1)


def _owner(pid: int) -> int | None:
    """Returns: the uid of a living process (None: gone, or a zombie that runs nothing)."""
    try:
        return None if start_time(pid) is None else os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
