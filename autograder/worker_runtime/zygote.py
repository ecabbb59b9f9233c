"""The warm start (root jail): a fork server that imports torch once and forks one jailed worker per start.

The zygote runs no student code and never receives a submission: it gets only the paths of a
worker's config and sandbox directory (both student-independent) and the worker's pipe ends. Each
fork takes the cold start's steps from the namespaces on: its keeper process (outside, like
`unshare --fork`) makes fresh mount, network, IPC, UTS and pid namespaces, and its child, pid 1
there, runs `bootstrap.main`: jail, fresh uid, rlimits, seccomp, the undumpable reaper, serve.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import signal
import socket
import sys
import tempfile
from typing import Any

from . import bootstrap

# What the grader runs with `python -I -B -u -c ZYGOTE_CODE lib_dir config_path socket_fd grader_pid`.
ZYGOTE_CODE = "import sys; sys.path.insert(0, sys.argv[1]); from worker_runtime.zygote import main; main(sys.argv[1:])"
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET  # = UNSHARE_FLAGS
PR_SET_PDEATHSIG = 1
FDS_PER_START = 5  # request (read end), reply (write end), status (write end), output (write end), exit (write end)
READY = b"ready "  # followed by {"preloaded_mb": {module: {"as": N, "data": N}}, "runtime_mb": {"as": N, "data": N}}
# What torch imports lazily on the runtime's own request path, the same in every worker and
# whatever the submission: the first backward with an explicit upstream gradient (the checks'
# gradient requests) imports torch.fx's symbolic shapes and sympy with them, about 0.3 CPU-s in
# each worker. Imported once here instead, after the declared preload.
RUNTIME_IMPORTS = ("torch.fx.experimental.symbolic_shapes",)
EXIT_KEEPER_FAILED = 75  # = jail.EXIT_JAIL_FAILED: the namespaces could not be made

_libc = ctypes.CDLL(None, use_errno=True)


def main(argv: list[str]) -> None:
    """Args: [lib_dir, config_path, socket_fd, grader_pid]; serves fork requests until the socket closes."""
    lib_dir, config_path = argv[0], argv[1]
    sock = socket.socket(fileno=int(argv[2]))
    grader_pid = int(argv[3])
    _die_with(grader_pid)
    with open(config_path, encoding="utf-8") as handle:
        config: dict[str, Any] = json.load(handle)
    bootstrap._clean_sys_path(config, lib_dir, in_namespace=False)
    import torch  # noqa: F401  (the point of the zygote: every fork starts with it imported)

    importlib.import_module(f"{__package__}.server")
    # A cold worker maps the interpreter, torch and the server under its memory limit too; what each
    # module of the declared list adds on top (its dependencies not loaded before it included) is
    # what a warm worker whose submission does not import it would lose of memory_mb: measured
    preloaded: dict[str, dict[str, int]] = {}
    for name in config.get("preload", []):  # the declared, student-independent list
        before = _memory_mb()
        with contextlib.suppress(BaseException):  # a broken module is the statement's problem later
            importlib.import_module(name)
        preloaded[name] = {kind: max(0, size - before[kind]) for kind, size in _memory_mb().items()}
    # A cold worker maps these only once a request needs them, after the submission has loaded
    # under its limit: what they add is given back to every fork (the grader adds it to the limit)
    before = _memory_mb()
    for name in RUNTIME_IMPORTS:
        with contextlib.suppress(ImportError):  # another torch: its worker imports what it needs
            importlib.import_module(name)
    runtime = {kind: max(0, size - before[kind]) for kind, size in _memory_mb().items()}
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:  # fork copies only this thread; a lock another one holds would never be freed
        sock.sendall(json.dumps({"error": f"the zygote has {threads} threads after its imports"}).encode())
        os._exit(1)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    sock.sendall(READY + json.dumps({"preloaded_mb": preloaded, "runtime_mb": runtime}).encode())
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 16, FDS_PER_START)
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)  # the grader closed its end (or ended)
        reply: dict[str, Any]
        pidfd = -1
        try:
            if len(fds) != FDS_PER_START:
                raise ValueError(f"expected {FDS_PER_START} descriptors, got {len(fds)}")
            pid, pidfd = _fork_keeper(json.loads(message), fds, sock, grader_pid)
            reply = {"pid": pid}
        except (OSError, ValueError) as exc:
            reply = {"error": str(exc)}
        finally:
            for fd in fds:  # only the worker's processes may hold the pipe ends (EOF tells the grader)
                os.close(fd)
        socket.send_fds(sock, [json.dumps(reply).encode()], [pidfd] if pidfd >= 0 else [])
        if pidfd >= 0:
            os.close(pidfd)


def _memory_mb() -> dict[str, int]:
    """Returns: this process's memory as its limits count it, in MB: "as" the virtual size
    (RLIMIT_AS), "data" the private writable mappings (RLIMIT_DATA, used on CUDA)."""
    kinds = {"VmSize": "as", "VmData": "data"}
    found = {"as": 0, "data": 0}
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if name in kinds:
                found[kinds[name]] = int(value.split()[0]) >> 10  # kB
    return found


def _die_with(parent_pid: int) -> None:
    """SIGKILL this process when its parent ends; exit now if the parent is already gone."""
    if _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent_pid:
        os._exit(0)


def _fork_keeper(request: dict[str, Any], fds: list[int], sock: socket.socket, grader_pid: int) -> tuple[int, int]:
    """Fork the keeper of one worker start. Returns: (its pid, a pidfd of it opened before it runs)."""
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(go_w)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            sock.close()
            _die_with(os.getppid())
            if os.read(go_r, 1) != b"g":  # the zygote holds our pidfd before anything can end us
                os._exit(1)
            os.close(go_r)
            _keeper(request, fds)
        finally:
            os._exit(1)
    os.close(go_r)
    try:
        pidfd = os.pidfd_open(pid)
    finally:
        os.write(go_w, b"g")
        os.close(go_w)
    return pid, pidfd


def _keeper(request: dict[str, Any], fds: list[int]) -> None:
    """Outside the sandbox, like `unshare --fork --kill-child`: make the namespaces, fork their pid 1,
    wait for it, write its status to the exit pipe and exit with it. Never returns."""
    request_fd, reply_fd, status_fd, output_fd, exit_fd = fds
    os.setsid()
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    keep = {0, 1, 2, request_fd, reply_fd, status_fd, exit_fd}
    _close_all_but(keep)
    os.environ.clear()  # the worker's environment, not the zygote's (its HOME points elsewhere)
    os.environ.update({str(k): str(v) for k, v in request["env"].items()})
    os.chdir(request["cwd"])
    if _libc.unshare(NAMESPACES) != 0:
        sys.stderr.write(f"worker setup failed (namespaces): {os.strerror(ctypes.get_errno())}\n")
        _exit_status(exit_fd, EXIT_KEEPER_FAILED)
    child = os.fork()
    if child == 0:  # pid 1 of the new pid namespace: today's bootstrap from the jail on
        os.close(exit_fd)
        _die_with(os.getppid())
        _forget_the_zygotes_state()
        bootstrap.main([request["lib_dir"], request["config_path"], str(request_fd), str(reply_fd), str(status_fd)])
        os._exit(1)
    for fd in (request_fd, reply_fd, status_fd, 1, 2):
        os.close(fd)
    _, status = os.waitpid(child, 0)  # retried on EINTR by Python itself (PEP 475)
    _exit_status(exit_fd, os.waitstatus_to_exitcode(status))  # -signal when killed, as subprocess says


def _forget_the_zygotes_state() -> None:
    """What a cold worker finds or draws afresh at its start, and a fork would otherwise share with
    the zygote and every other fork: tempfile's cached folder (the zygote's, not in the jail: a
    correct `tempfile.TemporaryFile()` failed warm only) and the generators seeded from entropy at
    import (numpy's, torch's; `random` reseeds itself in a forked child)."""
    tempfile.tempdir = None  # found again from this worker's TMPDIR at the first use
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # no argument: fresh entropy, as at a cold import
    sys.modules["torch"].default_generator.seed()


def _exit_status(exit_fd: int, code: int) -> None:
    """Tell the grader the keeper's return code (as subprocess reports one) and exit with it."""
    with contextlib.suppress(OSError):
        os.write(exit_fd, str(code).encode())
    os._exit(code if code >= 0 else 128 - code)


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor not in `keep` (the zygote's socket and anything else it held)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
