"""The grader's code shipped to Ray tasks as bytes, unpacked by each task into a private folder it removes.

Ray's own way (the job's `working_dir`) unpacks the code under the node's Ray folder with dirs
755 and files 644 and keeps it after the batch, so any account on a node could read the hidden
checks and the reference. Here the driver zips the code once per batch; each task unpacks it into
its own `mkdtemp` folder (0700, files 0600, owned by the account Ray runs as), imports the code
from there, and deletes the folder in a `finally`. A folder left by a killed task is deleted by
the next task of the same account on that node.

Run on the nodes before the grader's code is importable there: this module imports only the
standard library and Ray (it is shipped by value, see `RayExecutor.run`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import io
import os
import shutil
import sys
import tempfile
import time
import traceback
import zipfile
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

PREFIX = "grader-code-"  # the private folders' names in the node's temporary folder
LOCK_NAME = ".in-use"  # held (flock) by the task that owns the folder, released when it dies
OUTPUT_NAME = ".output"  # what the task printed (kept out of Ray's logs; deleted with the folder)
# A folder without its lock file is a task killed between mkdtemp and locking; older than this, stale.
UNLOCKED_GRACE_S = 300.0
KEY_BYTES = 32


def build_archive(root: Path, excludes: Sequence[str]) -> bytes:
    """Zip the grader's code in memory (sorted names, fixed times: the same tree gives the same bytes).

    Args:
        root: the checkout.
        excludes: gitignore-like patterns (a name, `**/name` or `*.ext`) of files and folders left out.

    Returns:
        The zip's bytes.
    """

    def excluded(relative: str) -> bool:
        name = relative.rsplit("/", 1)[-1]
        return any(fnmatch(name, pattern.removeprefix("**/")) or relative == pattern for pattern in excludes)

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for directory, folders, files in os.walk(root):
            relative_dir = os.path.relpath(directory, root)
            prefix = "" if relative_dir == "." else relative_dir + "/"
            folders[:] = sorted(f for f in folders if not excluded(prefix + f))
            for name in sorted(files):
                path = os.path.join(directory, name)
                if excluded(prefix + name) or os.path.islink(path) or not os.path.isfile(path):
                    continue
                info = zipfile.ZipInfo(prefix + name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, Path(path).read_bytes())
    return buffer.getvalue()


def seal(archive: bytes) -> tuple[bytes, bytes]:
    """Encrypt the archive with a fresh key (SHAKE-256 keystream XOR), so that the copy Ray keeps in
    its object store, or spills to disk under memory pressure, is not the code.

    Args:
        archive: from `build_archive`.

    Returns:
        (sealed bytes, key); the key travels inline with each task, never through the object store.
    """
    key = os.urandom(KEY_BYTES)
    return _xor_keystream(archive, key), key


def _xor_keystream(data: bytes, key: bytes) -> bytes:
    stream = hashlib.shake_256(key).digest(len(data))
    return (int.from_bytes(data, "little") ^ int.from_bytes(stream, "little")).to_bytes(len(data), "little")


def remove_stale_folders(base: str | None = None) -> list[str]:
    """Delete this account's private code folders whose task is gone (its lock is free).

    Args:
        base: where the folders are made (default: the temporary folder).

    Returns:
        The folders deleted.
    """
    base = base or tempfile.gettempdir()
    removed = []
    for entry in os.scandir(base):
        if not entry.name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue  # another account's: not ours to judge
            if _is_stale(entry.path):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
        except OSError:  # removed meanwhile by its own task
            continue
    return removed


def _is_stale(folder: str) -> bool:
    try:
        descriptor = os.open(os.path.join(folder, LOCK_NAME), os.O_RDONLY)
    except FileNotFoundError:
        return time.time() - os.stat(folder).st_mtime > UNLOCKED_GRACE_S
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its task is alive
    finally:
        os.close(descriptor)
    return True


def _unpack(archive: bytes, folder: str) -> list[str]:
    """Write the archive's files under `folder` (dirs 0700, files 0600). Returns: its top-level names."""
    tops = set()
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        for info in zipped.infolist():
            parts = info.filename.split("/")
            if info.is_dir() or info.filename.startswith("/") or ".." in parts:
                continue
            for depth in range(1, len(parts)):  # one by one: makedirs gives only the last one its mode
                with contextlib.suppress(FileExistsError):
                    os.mkdir(os.path.join(folder, *parts[:depth]), 0o700)
            target = os.path.join(folder, *parts)
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(zipped.read(info))
            tops.add(parts[0].removesuffix(".py"))
    return sorted(tops)


def _forget_modules(tops: Sequence[str]) -> None:
    """Drop the grader's modules from this process (the next task imports its own unpacked copy)."""
    for name in [n for n in sys.modules if n.split(".", 1)[0] in tops]:
        del sys.modules[name]


@contextlib.contextmanager
def private_code(archive: bytes) -> Iterator[str]:
    """Unpack the code into a new private folder, make it the first import path and the working
    directory, and undo it all (folder deleted) on exit.

    Args:
        archive: from `build_archive`.

    Yields:
        The folder.
    """
    remove_stale_folders()
    folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")  # 0700
    # Locked before it gets its name: a lock file another task finds is held unless its task died.
    lock = os.open(os.path.join(folder, LOCK_NAME + ".new"), os.O_WRONLY | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.rename(os.path.join(folder, LOCK_NAME + ".new"), os.path.join(folder, LOCK_NAME))
    saved_cwd, saved_bytecode, tops = os.getcwd(), sys.dont_write_bytecode, []
    try:
        tops = _unpack(archive, folder)
        # A worker process runs many tasks, and a local Ray's workers may see the driver's checkout
        # on their path: only this task's copy may be imported.
        _forget_modules(tops)
        sys.path.insert(0, folder)
        sys.dont_write_bytecode = True  # no .pyc: nothing but the archive's files is written
        importlib.invalidate_caches()
        os.chdir(folder)  # as under Ray's working_dir
        yield folder
    finally:
        os.chdir(saved_cwd)
        sys.dont_write_bytecode = saved_bytecode
        while folder in sys.path:
            sys.path.remove(folder)
        sys.path_importer_cache.pop(folder, None)
        _forget_modules(tops)
        os.close(lock)
        shutil.rmtree(folder, ignore_errors=True)


class PrivateTaskError(RuntimeError):
    """A task's error, without the source lines Ray would put into its message and logs."""


def run_with_private_code(sealed: bytes, key: bytes, entry: str, shared: bytes, *args: Any) -> Any:
    """Body of a Ray task: call `entry` from the grader's code unpacked into a private folder.

    What the call prints (warnings quote source lines) goes to a file in that folder, not to the
    node's Ray logs, which every account can read; an error leaves as a `PrivateTaskError` that
    names the frames but quotes no code.

    Args:
        sealed: the archive from `seal` (through the object store).
        key: its key (inline with the task).
        entry: "module:function" in the grader's code.
        shared: a cloudpickle of the leading arguments (loaded once the code is importable: it
            may name the grader's classes).
        *args: the remaining arguments (plain values).

    Returns:
        What the function returns (plain values: the caller parses it without the code).

    Raises:
        PrivateTaskError: the call failed.
    """
    from ray import cloudpickle  # Ray is on every node; loads what the driver's cloudpickle made

    with private_code(_xor_keystream(sealed, key)) as folder, _output_into(os.path.join(folder, OUTPUT_NAME)):
        try:
            module, name = entry.split(":")
            function: Callable[..., Any] = getattr(importlib.import_module(module), name)
            return function(*cloudpickle.loads(shared), *args)
        except Exception as error:
            frames = [
                f"{frame.filename}:{frame.lineno} in {frame.name}"
                for frame in traceback.extract_tb(error.__traceback__)
            ]
            raise PrivateTaskError(f"{type(error).__name__}: {error} (at {'; '.join(frames[-5:])})") from None


@contextlib.contextmanager
def _output_into(path: str) -> Iterator[None]:
    """Send this process's stdout and stderr (Python's and the descriptors') into a private file."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    sink = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(sink, 1)  # what C code and child processes write
        os.dup2(sink, 2)
        with (
            open(sink, "w", encoding="utf-8", closefd=False) as text,
            contextlib.redirect_stdout(text),  # Python's streams, which need not be the descriptors
            contextlib.redirect_stderr(text),
        ):
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in (*saved, sink):
            os.close(descriptor)
