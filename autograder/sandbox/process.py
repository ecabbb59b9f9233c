"""One worker OS process: spawning it, exchanging frames over pipes under a deadline, keeping its output, killing it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from autograder.i18n import t
from autograder.worker_runtime.protocol import MAX_HEADER_BYTES, PREFIX, ProtocolError, parse_header

from .treewatch import TreeMemoryWatch, kill_members, kill_tree, snapshot, wait_gone
from .uidjail import kill_user

F_SETPIPE_SZ = 1031
EXIT_ORPHANED = 77  # the launcher found the grader gone before it started
KILL_WAIT_S = 10.0  # how long kill() waits for the sandbox's processes to be gone
_READ_CHUNK = 1 << 20
# How a worker ended, in the catalogue's words (worker.ended.*): shown to students inside their reports.
_SIGNAL_MEANINGS: dict[int, str] = {
    signal.SIGKILL: "worker.ended.sigkill",
    signal.SIGXCPU: "worker.ended.sigxcpu",
    signal.SIGSEGV: "worker.ended.sigsegv",
    signal.SIGXFSZ: "worker.ended.sigxfsz",
    signal.SIGABRT: "worker.ended.sigabrt",
}
_EXIT_MEANINGS: dict[int | None, str] = {86: "worker.ended.memory_reply"}


class ExchangeError(Exception):
    """A request did not get a reply. kind: "timeout", "died", "memory" (the tree's memory limit)
    or "protocol"; detail: what happened."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


class OutputLog:
    """The tail (at most `cap` bytes) of everything the student printed; older output is dropped."""

    def __init__(self, cap: int) -> None:
        """Args: cap in bytes."""
        self.cap = cap
        self.total_bytes = 0
        self._tail = bytearray()

    def write(self, data: bytes) -> None:
        """Args: bytes read from the worker's stdout/stderr."""
        self.total_bytes += len(data)
        self._tail += data
        if len(self._tail) > self.cap:  # a bytearray drops its head without copying the rest
            del self._tail[: len(self._tail) - self.cap]

    def tail(self, lines: int = 20) -> str:
        """Args: how many lines. Returns: the last lines printed (decoded leniently)."""
        text = self._tail.decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:]) if lines > 0 else ""


class _FrameReader:
    """Reassembles frames from reply-pipe bytes, refusing oversized ones before buffering them."""

    def __init__(self, max_blob: int) -> None:
        self.max_blob = max_blob
        self.buffer = bytearray()

    def next_frame(self) -> tuple[dict[str, Any], bytes] | None:
        if len(self.buffer) < PREFIX.size:
            return None
        head_len, blob_len = PREFIX.unpack_from(self.buffer)
        if head_len > MAX_HEADER_BYTES or blob_len > self.max_blob:
            raise ExchangeError(
                "protocol",
                f"a reply of {(head_len + blob_len) >> 20} MB is over the reply "
                f"limit of {self.max_blob >> 20} MB (worker.reply_mb); "
                "it was refused without being read",
            )
        end = PREFIX.size + head_len + blob_len
        if len(self.buffer) < end:
            return None
        view = memoryview(self.buffer)
        head = bytes(view[PREFIX.size : PREFIX.size + head_len])
        blob = bytes(view[PREFIX.size + head_len : end])  # one copy, not a slice and then a copy
        view.release()
        if len(self.buffer) == end:
            self.buffer = bytearray()  # frees the reply's buffer at once
        else:
            del self.buffer[:end]
        try:
            return parse_header(head), blob
        except ProtocolError as exc:
            raise ExchangeError("protocol", str(exc)) from None


# Run before the launcher (bwrap, unshare, or the worker itself), in its process: SIGKILL when the
# grader ends, however it ends (the launchers pass the same signal on to the sandbox's pid 1, which
# ends its pid namespace); a grader already gone is caught by getppid. A small exec'd helper, not
# Popen's preexec_fn, which is unsafe in a process with threads (Ray's workers, the watchdogs).
DIE_WITH_GRADER = (
    "import ctypes, os, sys\n"
    "if ctypes.CDLL(None).prctl(1, 9, 0, 0, 0) != 0 or os.getppid() != int(sys.argv[1]):\n"
    f"    os._exit({EXIT_ORPHANED})\n"
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def die_with_grader(argv: Sequence[str]) -> list[str]:
    """Args: a launcher's command line. Returns: the same, started under DIE_WITH_GRADER (same pid)."""
    return [sys.executable, "-I", "-S", "-c", DIE_WITH_GRADER, str(os.getpid()), *argv]


class WorkerProcess:
    """A started worker with its pipes; all reads and writes are non-blocking and deadline-bound."""

    def __init__(
        self,
        build_argv: Callable[[Sequence[int]], list[str]],
        env: dict[str, str],
        cwd: str,
        output: OutputLog,
        with_status_pipe: bool,
        max_reply_bytes: int,
        memory_limit_mb: int | None = None,
        start: Callable[[Sequence[int], int, Callable[[], subprocess.Popen[bytes]]], Any] | None = None,
    ) -> None:
        """Args:
        build_argv: given the child's (request, reply, status) fds, returns the command line.
        env: the whole environment; cwd: working directory.
        output: where the worker's stdout/stderr go.
        with_status_pipe: jailed modes: the reaper reports the worker's exit status.
        max_reply_bytes: replies larger than this fail the request.
        memory_limit_mb: limit of the resident memory of the whole process tree (None: none).
        start: given the child's fds, the output pipe's write end and the cold start (a function
            of no arguments), starts the worker some other way (the warm start) and returns a
            Popen-like handle; None: the cold start, Popen of build_argv.
        """
        request_r, self.request_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        self.status_r, status_w = os.pipe() if with_status_pipe else (-1, -1)
        self.output_r, output_w = os.pipe()
        child_fds = (request_r, reply_w, status_w)

        def cold() -> subprocess.Popen[bytes]:  # the launcher under DIE_WITH_GRADER, in a session of its own
            return subprocess.Popen(
                die_with_grader(build_argv(child_fds)),
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=[fd for fd in child_fds if fd >= 0],
                env=env,
                cwd=cwd,
                start_new_session=True,
            )

        try:
            self.proc = start(child_fds, output_w, cold) if start is not None else cold()
        finally:
            for fd in (*child_fds, output_w):
                if fd >= 0:
                    os.close(fd)
        for fd in (self.request_w, self.reply_r, self.output_r, self.status_r):
            if fd >= 0:
                os.set_blocking(fd, False)
        for fd in (self.request_w, self.reply_r):
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, F_SETPIPE_SZ, 1 << 20)  # fewer wake-ups for big tensors
        try:  # a forked worker's handle has the pidfd the zygote opened before the worker ran
            pidfd_dup = getattr(self.proc, "pidfd_dup", None)
            self.pidfd = pidfd_dup() if pidfd_dup is not None else os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            self.pidfd = -1
        self.memory_watch = TreeMemoryWatch(self.proc.pid, memory_limit_mb) if memory_limit_mb else None
        self.output = output
        self.reader = _FrameReader(max_reply_bytes)
        self.output_open = True
        self.first_seen: dict[int, str] = {}  # {pid: start time} of the tree at the first reply
        self.kill_uid: int | None = None

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None

    def exchange(
        self, frame: bytes, deadline: float, on_event: Callable[[dict[str, Any]], float | None] | None = None
    ) -> tuple[dict[str, Any], bytes]:
        """Send a request frame and wait for its reply, draining output meanwhile.

        Args:
            frame: the request's bytes.
            deadline: time.monotonic() value by which the reply must have arrived.
            on_event: called with progress events; may return a new deadline.
        Returns:
            (reply header, reply blob).
        Raises:
            ExchangeError: timeout, the worker died, or it sent something malformed.
        """
        pending = memoryview(frame)
        exited = False
        while True:
            found = self.reader.next_frame()
            if found is not None:
                header = found[0]
                if not self.first_seen:  # the jail is up: its launcher, pid 1 and worker exist
                    self.first_seen = snapshot(self.proc.pid)
                if "event" not in header:
                    return found
                new_deadline = on_event(header) if on_event else None
                deadline = new_deadline if new_deadline is not None else deadline
                continue
            if exited:
                self._raise_died()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ExchangeError("timeout", "no reply in time")
            poller = select.poll()
            poller.register(self.reply_r, select.POLLIN)
            if self.output_open:
                poller.register(self.output_r, select.POLLIN)
            if self.pidfd >= 0:
                poller.register(self.pidfd, select.POLLIN)
            if pending:
                poller.register(self.request_w, select.POLLOUT)
            for fd, _ in poller.poll(max(1, int(min(remaining, 0.5) * 1000))):
                if fd == self.request_w:
                    pending = self._write_some(pending)
                elif fd == self.output_r:
                    self.drain_output()
                elif fd == self.reply_r:
                    exited = exited or self._read_reply() == "eof"
                elif fd == self.pidfd:  # gone: keep what it wrote, a complete reply still counts
                    for _ in range(64):  # bounded: a leftover child (plain mode) may keep writing
                        if self._read_reply() != "more":
                            break
                    exited = True
            if self.pidfd < 0 and not self.alive:
                exited = True

    def _write_some(self, pending: memoryview) -> memoryview:
        try:
            return pending[os.write(self.request_w, pending[:_READ_CHUNK]) :]
        except BlockingIOError:
            return pending
        except BrokenPipeError:
            self._raise_died()

    def _read_reply(self) -> str:
        """Read what is available on the reply pipe. Returns: "more", "empty" (would block) or "eof"."""
        try:
            chunk = os.read(self.reply_r, _READ_CHUNK)
        except BlockingIOError:
            return "empty"
        if not chunk:
            return "eof"
        self.reader.buffer += chunk
        return "more"

    def drain_output(self, budget: int = 8 * _READ_CHUNK) -> None:
        """Move available worker output into the log (bounded per call so replies are not starved)."""
        while budget > 0 and self.output_open:
            try:
                chunk = os.read(self.output_r, _READ_CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                self.output_open = False
                return
            self.output.write(chunk)
            budget -= len(chunk)

    def _raise_died(self) -> NoReturn:
        description = self.exit_description()
        if self.memory_watch is not None and self.memory_watch.tripped:
            raise ExchangeError("memory", t("worker.ended.memory_tree", limit=self.memory_watch.limit_mb))
        raise ExchangeError("died", description)

    def exit_description(self) -> str:
        """Returns: how the worker ended, e.g. "exited (code 0)" (waits briefly; kills if needed)."""
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
        self.drain_output()
        status: dict[str, Any] = {}
        with contextlib.suppress(BlockingIOError, ValueError):
            status = json.loads(os.read(self.status_r, 4096) or b"{}") if self.status_r >= 0 else {}
        code = self.proc.returncode
        signum = status.get("signal") if status else (-code if code is not None and code < 0 else None)
        if not status and self.status_r >= 0 and code is not None and 128 < code < 128 + 65:
            signum = code - 128  # the reaper itself was killed; unshare/bwrap report 128 + signal
        if signum:
            name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
            return t(_SIGNAL_MEANINGS.get(signum, "worker.ended.signal"), name=name)
        exit_code = status.get("exit_code", code) if status else code
        return t(_EXIT_MEANINGS.get(exit_code, "worker.ended.exit"), code=exit_code)

    def kill(self) -> None:
        """Kill every process of the worker's tree (and with its pid 1 its pid namespace), reap
        it, and wait until every process it had is gone, so that none outlives the worker."""
        # Every process of the tree by its own pid, not only the group: the sandbox's pid 1 runs
        # in a session of its own (bubblewrap's --new-session), and killing it from here ends
        # its pid namespace even if something inside cleared its parent-death signal.
        # The processes seen at the first reply are killed too: the namespace's pid 1 is among
        # them, and it is found even when the launcher (bwrap, unshare) is already gone.
        kill_members(self.first_seen)
        if self.kill_uid is not None:  # the jail without namespaces: every process of its uid
            kill_user(self.kill_uid)
        members = {**self.first_seen, **(kill_tree(self.proc.pid) if self.proc.poll() is None else {})}
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        wait_gone(members, KILL_WAIT_S)

    def close(self) -> None:
        """Kill the worker and release the pipes."""
        if self.memory_watch is not None:
            self.memory_watch.stop()
        self.kill()
        for name in ("request_w", "reply_r", "output_r", "status_r", "pidfd"):
            fd = getattr(self, name)
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
                setattr(self, name, -1)
