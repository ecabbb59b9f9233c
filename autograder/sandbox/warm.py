"""The warm start, trusted side: one zygote per grading process, and a handle on each worker it forks."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from autograder.worker_runtime.zygote import FDS_PER_START, READY, ZYGOTE_CODE

from .limits import Limits
from .plan import PYTHON_FLAGS, SandboxDir, build_config, build_env, sandbox_uid

ZYGOTE_READY_S = 120.0  # its imports under load; beyond this the cold start is used
FORK_REPLY_S = 60.0  # a fork takes milliseconds; generous for a loaded machine
# pyarrow (imported by datasets) starts a jemalloc background thread; the zygote must have one thread
ZYGOTE_ONLY_ENV = {"JE_ARROW_MALLOC_CONF": "background_thread:false"}


class ZygoteUnavailable(RuntimeError):
    """The zygote could not start or answer; the caller starts the worker cold."""


class ForkedWorker:
    """A Popen-like handle on a keeper forked by the zygote (not the grader's child).

    Liveness and kill go through a pidfd the zygote opened before the keeper could run; the return
    code is what the keeper wrote to the exit pipe (SIGKILL when it was killed before writing).
    """

    def __init__(self, pid: int, pidfd: int, exit_r: int) -> None:
        """Args: the keeper's pid, a pidfd of it, the read end of its exit pipe."""
        self.pid, self._pidfd, self._exit_r = pid, pidfd, exit_r
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Returns: the return code, or None while the keeper runs."""
        if self.returncode is None and self._pidfd >= 0 and self._ended(0):
            self._collect()
        return self.returncode

    def _ended(self, timeout_s: float | None) -> bool:
        poller = select.poll()  # not select.select: descriptors above 1023 are fine
        poller.register(self._pidfd, select.POLLIN)
        return bool(poller.poll(None if timeout_s is None else int(timeout_s * 1000)))

    def wait(self, timeout: float | None = None) -> int:
        """Args: seconds to wait (None: no limit). Returns: the return code.
        Raises: subprocess.TimeoutExpired."""
        if self.returncode is None and self._pidfd >= 0:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            self._collect()
        assert self.returncode is not None
        return self.returncode

    def pidfd_dup(self) -> int:
        """Returns: a new descriptor of the keeper's pidfd (the caller closes it)."""
        return os.dup(self._pidfd)

    def kill(self) -> None:
        """SIGKILL the keeper (its pid namespace's pid 1 dies with it: parent-death signal)."""
        if self.returncode is None and self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _collect(self) -> None:
        written = b""
        with contextlib.suppress(OSError):
            written = os.read(self._exit_r, 32)
        try:
            self.returncode = int(written)
        except ValueError:
            self.returncode = -signal.SIGKILL  # killed before it could say
        for fd in (self._exit_r, self._pidfd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._exit_r = self._pidfd = -1


class Zygote:
    """The fork server of this grading process (root jail only); started on first use."""

    def __init__(self, limits: Limits, preload: Sequence[str]) -> None:
        """Start the zygote and wait until it has imported torch and `preload`.

        Args:
            limits: the workers' limits (their environment, thread counts).
            preload: module names imported once in the zygote (student-independent).
        Raises:
            ZygoteUnavailable: it did not come up.
        """
        self.key = _key(limits, preload)
        self._lock = threading.Lock()
        self.sandbox = SandboxDir((), os.getuid())  # its own copy of the runtime; no work is done there
        home = self.sandbox.path / "home"
        home.mkdir(mode=0o700)
        config = build_config(limits, "namespace", None, self.sandbox, "cpu", (), preload)
        config_path = self.sandbox.write_config(json.dumps(config))
        # the workers' environment, but caches its imports write (matplotlib's font list) stay here
        env = {**build_env(limits, "namespace", self.sandbox), "HOME": str(home), "TMPDIR": str(home)}
        env.update({key: str(home / os.path.basename(value)) for key in _HOME_KEYS if (value := env.get(key))})
        env.update(ZYGOTE_ONLY_ENV)
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = [sys.executable, *PYTHON_FLAGS, "-c", ZYGOTE_CODE, str(self.sandbox.lib), str(config_path)]
        try:
            self.proc = subprocess.Popen(
                [*argv, str(theirs.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=[theirs.fileno()],
                env=env,
                cwd=str(home),
                start_new_session=True,
            )
        finally:
            theirs.close()
        ready, _, _ = select.select([self._sock], [], [], ZYGOTE_READY_S)
        answer = self._sock.recv(4096) if ready else b""
        try:
            ready = json.loads(answer.removeprefix(READY))
            # per preloaded module: what it mapped beyond the modules loaded before it, per limit kind
            self.preloaded_mb = {
                str(name): {kind: int(sizes[kind]) for kind in ("as", "data")}
                for name, sizes in ready["preloaded_mb"].items()
            }
            # what the runtime's own lazy imports (zygote.RUNTIME_IMPORTS) map, per limit kind
            self.runtime_mb = {kind: int(ready["runtime_mb"][kind]) for kind in ("as", "data")}
        except (ValueError, KeyError, TypeError):
            self.close()
            raise ZygoteUnavailable(
                f"the zygote did not start: {answer.decode(errors='replace') or 'no answer'}"
            ) from None
        # Its imports are done and each fork runs from its own worker's directory: removed now, the
        # zygote's copy of the runtime is not left behind by a process that ends without exit
        # handlers (a Ray worker is killed at shutdown)
        self.sandbox.remove()

    def fork(self, request: dict[str, Any], fds: Sequence[int], exit_r: int) -> ForkedWorker:
        """Fork one jailed worker.

        Args:
            request: lib_dir, config_path (the worker's, in its sandbox dir), env, cwd.
            fds: the worker's request, reply, status, output and exit pipe ends (the zygote closes
                its copies; the caller closes its own).
            exit_r: the read end of the exit pipe.
        Returns:
            a handle on the worker's keeper.
        Raises:
            ZygoteUnavailable: the zygote is gone or refused.
        """
        assert len(fds) == FDS_PER_START
        with self._lock:
            try:
                socket.send_fds(self._sock, [json.dumps(request).encode()], list(fds))
                if not select.select([self._sock], [], [], FORK_REPLY_S)[0]:
                    raise ZygoteUnavailable("the zygote did not answer")
                message, pidfds, _, _ = socket.recv_fds(self._sock, 4096, 1)
            except OSError as exc:
                raise ZygoteUnavailable(f"the zygote is gone: {exc}") from None
        reply = json.loads(message or b"{}")
        if "pid" not in reply or len(pidfds) != 1:
            for fd in pidfds:
                os.close(fd)
            raise ZygoteUnavailable(f"the zygote refused: {reply.get('error', 'no answer')}")
        return ForkedWorker(int(reply["pid"]), pidfds[0], exit_r)

    def memory_allowance_mb(self, memory_rlimit: str, imported: Sequence[str]) -> int:
        """What a fork's memory rlimit adds to memory_mb, so that the student keeps a cold worker's room.

        A cold worker sets its limit before it imports torch, so torch and the modules its
        submission imports count against memory_mb; a fork starts with the whole declared preload
        mapped. The allowance is what the zygote measured for the preloaded modules the submission
        does not import (matched by top-level package). A module's size is what it added after
        those before it, so a shared dependency is counted with the first: the room is the cold
        one, or larger by such a dependency, never smaller. What the runtime's own lazy imports
        map (a cold worker maps them at a request, after the submission has loaded) is always
        added. The tree's resident memory stays bounded by memory_mb (the tree watchdog), and the
        messages name memory_mb.

        Args:
            memory_rlimit: "as" (RLIMIT_AS) or "data" (RLIMIT_DATA, CUDA workers).
            imported: the top-level installed modules the submission imports (`preload_candidates`).
        Returns:
            megabytes to add to the fork's limit.
        """
        kind = "as" if memory_rlimit == "as" else "data"
        own = set(imported)
        preload = sum(sizes[kind] for name, sizes in self.preloaded_mb.items() if name.split(".")[0] not in own)
        return preload + self.runtime_mb[kind]

    @property
    def alive(self) -> bool:
        """Whether the zygote process still runs."""
        return self.proc.poll() is None

    def close(self) -> None:
        """End the zygote (its workers' keepers die with it) and delete its directory."""
        with contextlib.suppress(OSError):
            self._sock.close()
        if getattr(self, "proc", None) is not None:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.sandbox.remove()


_HOME_KEYS = ("MPLCONFIGDIR", "XDG_CACHE_HOME", "HF_HOME")
_zygotes: dict[tuple[Any, ...], Zygote] = {}
_broken: set[tuple[Any, ...]] = set()
_registry_lock = threading.Lock()


def _key(limits: Limits, preload: Sequence[str]) -> tuple[Any, ...]:
    return (limits.threads, tuple(preload), os.getpid())


def warm_zygote(limits: Limits, isolation: str) -> Zygote | None:
    """Args: the worker's limits and chosen isolation. Returns: this process's zygote for them, or
    None when the cold start is to be used (off, not the root jail, or the zygote failed once)."""
    if not limits.warm_start or isolation != "namespace" or sandbox_uid(0, isolation) is None:
        return None
    key = _key(limits, limits.warm_preload)
    with _registry_lock:
        zygote = _zygotes.get(key)
        if zygote is not None and not zygote.alive:
            zygote.close()
            del _zygotes[key]
            zygote = None
        if zygote is None and key not in _broken:
            try:
                zygote = _zygotes[key] = Zygote(limits, limits.warm_preload)
            except (ZygoteUnavailable, OSError):
                _broken.add(key)
        return zygote


def forget(zygote: Zygote) -> None:
    """Close a zygote that failed a fork; later starts of this process go cold."""
    with _registry_lock:
        if _zygotes.get(zygote.key) is zygote:
            del _zygotes[zygote.key]
        _broken.add(zygote.key)
    zygote.close()


def fork_or_popen(
    zygote: Zygote,
    request: dict[str, Any],
    child_fds: Sequence[int],
    output_w: int,
    cold: Callable[[], subprocess.Popen[bytes]],
) -> ForkedWorker | subprocess.Popen[bytes]:
    """Start a worker from the zygote; if it fails, forget the zygote and start this one cold.

    Args:
        zygote: this process's zygote.
        request: lib_dir, config_path, env, cwd of the worker.
        child_fds: its (request, reply, status) pipe ends; output_w: its stdout/stderr.
        cold: starts the same worker cold.
    Returns:
        a Popen-like handle.
    """
    exit_r, exit_w = os.pipe()
    try:
        return zygote.fork(request, [*child_fds, output_w, exit_w], exit_r)
    except ZygoteUnavailable:
        os.close(exit_r)
        forget(zygote)
        return cold()
    finally:
        os.close(exit_w)


def zygote_pids() -> list[int]:
    """Returns: the pids of this process's running zygotes."""
    with _registry_lock:
        return [zygote.proc.pid for key, zygote in _zygotes.items() if key[-1] == os.getpid() and zygote.alive]


@atexit.register
def _close_all() -> None:
    for key, zygote in list(_zygotes.items()):
        if key[-1] == os.getpid():  # not a zygote of the process this one was forked from
            zygote.close()
    _zygotes.clear()
