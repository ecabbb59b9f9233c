"""The warm start (root jail): workers forked from a zygote keep the cold start's isolation (reach_zygote.py)."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from assignments.transformer_mt.assignment import ASSIGNMENT
from autograder.sandbox import Limits, Worker, warm
from autograder.sandbox.plan import choose_isolation
from autograder.sandbox.warm import ForkedWorker
from autograder.worker_runtime.zygote import RUNTIME_IMPORTS

COURSE_PRELOAD = ASSIGNMENT.worker_preload  # Part 2's (assignment.yml `worker_preload`)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "worker"
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or choose_isolation(Limits()) != "namespace", reason="the warm start is for the root jail"
)
SECRET = "warm-start-secret-7c1e"  # appears only in the submission's statements
SOURCE = [("reach_zygote.py", 1, (FIXTURES / "reach_zygote.py").read_text()), ("cell 2", 1, f"secret = {SECRET!r}")]


@pytest.fixture(autouse=True)
def _no_zygote_marked_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts where no zygote is marked failed. A failed zygote start or fork makes the
    rest of the process start cold (the designed fallback), so one failure in an earlier test of the
    same xdist worker turned every later test here cold: seen once in CI, beside other test runs."""
    monkeypatch.setattr(warm, "_broken", set())


def _handle_of(worker: Worker) -> ForkedWorker | subprocess.Popen[bytes]:
    """Returns: the handle on the worker's process (a forked keeper, or a cold launcher)."""
    process = worker._launcher.current
    assert process is not None
    return process.proc


def _zygote_of(worker: Worker) -> warm.Zygote:
    assert isinstance(_handle_of(worker), ForkedWorker), "the worker was not forked warm"
    zygote = warm.warm_zygote(worker.limits, "namespace")
    assert zygote is not None
    return zygote


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return int(handle.read().rsplit(b")", 1)[1].split()[1])


def test_a_warm_worker_is_forked_from_the_zygote_and_jailed_like_a_cold_one():
    with Worker(SOURCE, Limits(timeout_s=30, warm_start=True)) as worker:
        zygote = _zygote_of(worker)
        keeper = _handle_of(worker).pid
        assert _parent(keeper) == zygote.proc.pid
        assert worker.isolation["mode"] == "namespace"
        pid, uid, visible = worker.call("whoami", [])
        assert pid == 2 and visible == [1, 2]  # its own pid namespace: the reaper and itself
        assert uid == worker.isolation["uid"] and uid >= 1 << 20


def test_a_warm_worker_starts_with_the_runtimes_lazy_imports_done():
    """The modules torch imports at the first gradient request are the zygote's, not each worker's."""
    with Worker(SOURCE, Limits(timeout_s=30, warm_start=True)) as worker:
        _zygote_of(worker)
        names = list(RUNTIME_IMPORTS)
        assert worker.call("loaded", [names]) == names


def test_the_submission_cannot_signal_trace_or_read_the_zygote_or_its_keeper():
    with Worker(SOURCE, Limits(timeout_s=30, warm_start=True)) as worker:
        zygote = _zygote_of(worker)
        for pid in (zygote.proc.pid, _handle_of(worker).pid, os.getpid()):
            found = worker.call("reach", [pid])
            assert found["kill"] == errno.ESRCH, found  # outside its pid namespace
            assert found["ptrace"] == errno.EPERM, found  # the seccomp filter
            assert found["pidfd_open"] == errno.ESRCH, found
            assert found["proc_mem"] == errno.ENOENT and found["proc_environ"] == errno.ENOENT, found
        assert zygote.alive


def test_a_warm_worker_shows_the_submission_what_a_cold_one_shows_and_draws_afresh():
    """Temp folder, cwd, umask, environment, arguments, hash seed, signals, rlimits: the same warm and
    cold; every random generator's first draw differs in each worker (environment_probe.py). Before:
    tempfile's folder was the zygote's (TemporaryFile failed warm only), and numpy's, torch's and
    str hashes were the same in every fork."""
    source = [("environment_probe.py", 1, (FIXTURES / "environment_probe.py").read_text())]
    shown = []
    for warm_start in (True, True, False, False):
        limits = Limits(timeout_s=60, warm_start=warm_start, warm_preload=COURSE_PRELOAD)
        with Worker(source, limits) as worker:
            assert isinstance(_handle_of(worker), ForkedWorker) == warm_start
            shown.append(worker.call("fingerprint", []))
    warm_same, cold_same = shown[0]["same"], shown[2]["same"]
    assert warm_same["temporary_file"] is True and warm_same["tempdir"] == warm_same["environ"]["TMPDIR"]
    for name in cold_same:
        assert [entry["same"][name] for entry in shown] == [cold_same[name]] * 4, name
    for name in shown[0]["drawn"]:
        drawn = [entry["drawn"][name] for entry in shown]
        assert len(set(drawn)) == 4, (name, drawn)


def test_the_worker_inherits_no_descriptor_of_the_zygote():
    with Worker(SOURCE, Limits(timeout_s=30, warm_start=True)) as worker:
        _zygote_of(worker)
        described = worker.call("descriptors", [])
    kinds = {fd: target.split(":")[0] for fd, target in described.items()}
    assert "socket" not in kinds.values(), described  # not the zygote's control socket
    pipes = [fd for fd, kind in kinds.items() if kind == "pipe"]
    assert len(pipes) == 4, described  # stdout and stderr (one pipe), request, reply
    assert set(kinds) - set(pipes) == {0} and described[0] == "/dev/null", described


def test_sibling_workers_cannot_reach_each_other():
    limits = Limits(timeout_s=30, warm_start=True)
    with Worker(SOURCE, limits) as first, Worker(SOURCE, limits) as second:
        _zygote_of(first)
        _zygote_of(second)
        assert first.isolation["uid"] != second.isolation["uid"]
        first.call("leave_note", ["first"])
        assert second.call("read_note", []) == "FileNotFoundError"  # a private /tmp each
        sibling_keeper = _handle_of(second).pid
        found = first.call("reach", [sibling_keeper])
        assert found["kill"] == errno.ESRCH and found["pidfd_open"] == errno.ESRCH, found
        assert second.call("read_note", []) == "FileNotFoundError"


def test_the_zygote_receives_paths_and_pipes_but_never_the_submission(monkeypatch):
    sent: list[tuple[bytes, str]] = []
    real_send_fds = socket.send_fds

    def spy(sock, buffers, fds, *args):
        message = b"".join(bytes(b) for b in buffers)
        sent.append((message, Path(json.loads(message)["config_path"]).read_text()))
        return real_send_fds(sock, buffers, fds, *args)

    monkeypatch.setattr(socket, "send_fds", spy)  # the module warm uses
    with Worker(SOURCE, Limits(timeout_s=30, warm_start=True)) as worker:
        _zygote_of(worker)
        assert worker.call("whoami", [])[0] == 2
    assert sent
    for message, config in sent:
        assert set(json.loads(message)) == {"lib_dir", "config_path", "env", "cwd"}
        assert SECRET not in message.decode() and SECRET not in config
        assert "statements" not in json.loads(config)


def test_a_dead_zygote_is_replaced_and_a_failed_one_makes_workers_start_cold():
    limits = Limits(timeout_s=30, warm_start=True, warm_preload=("json",))  # a zygote of its own, killed below
    with Worker(SOURCE, limits) as worker:
        zygote = _zygote_of(worker)
    zygote.proc.kill()
    zygote.proc.wait(timeout=10)
    with Worker(SOURCE, limits) as worker:
        assert worker.call("whoami", [])[0] == 2
        assert _zygote_of(worker) is not zygote  # a fresh zygote took over
    replacement = warm.warm_zygote(limits, "namespace")
    assert replacement is not None
    warm.forget(replacement)  # counted as failed: this process starts these workers cold from now on
    with Worker(SOURCE, limits) as worker:
        assert worker.call("whoami", [])[0] == 2
        assert isinstance(_handle_of(worker), subprocess.Popen)


def test_a_refused_fork_starts_that_worker_cold_and_the_rest_of_the_process_too(monkeypatch):
    limits = Limits(timeout_s=30, warm_start=True, warm_preload=("base64",))  # a zygote of its own

    def refuse(*args: object, **kwargs: object) -> ForkedWorker:
        raise warm.ZygoteUnavailable("the zygote refused: test")

    monkeypatch.setattr(warm.Zygote, "fork", refuse)
    with Worker(SOURCE, limits) as worker:
        assert isinstance(_handle_of(worker), subprocess.Popen)  # the cold start took over
        assert worker.call("whoami", [])[0] == 2
    assert warm.warm_zygote(limits, "namespace") is None  # forgotten: later starts go cold at once


KILLED_GRADER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import Limits, Worker
worker = Worker("import time", Limits(timeout_s=30, warm_start=True))
zygote = next(iter(__import__("autograder.sandbox.warm", fromlist=["x"])._zygotes.values()))
print(json.dumps({"zygote": zygote.proc.pid, "keeper": worker._launcher.current.proc.pid}), flush=True)
time.sleep(600)
"""


def test_a_killed_grader_takes_the_zygote_and_its_workers_with_it():
    grader = subprocess.Popen(
        [sys.executable, "-c", KILLED_GRADER, str(ROOT)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert grader.stdout is not None
        pids = json.loads(grader.stdout.readline())
    finally:
        grader.kill()
        grader.wait(timeout=30)
    deadline = time.monotonic() + 30
    alive = list(pids.values())
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _running(pid)]
        time.sleep(0.2)
    assert not alive, pids


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


# What may differ between a warm and a cold worker's room: the interpreters are not mapped
# identically (the zygote's start-up imports, heap arenas); far below what the preload maps.
ROOM_TOLERANCE_MB = 64


# the course's imports, as a notebook writes them (the top-level packages of COURSE_PRELOAD)
COURSE_IMPORTS = ("course imports", 1, "\n".join(f"import {name}" for name in COURSE_PRELOAD))


@pytest.mark.parametrize(
    ("source", "allowed"), [(SOURCE, True), ([COURSE_IMPORTS, *SOURCE], False)], ids=["torch_only", "course"]
)
def test_a_warm_worker_keeps_the_memory_room_of_a_cold_one(source, allowed):
    """The fork's rlimit adds what the preloaded modules the submission does not import map: a
    submission importing none of them, or all of them, has the cold room under its limit."""
    limits = Limits(timeout_s=60, memory_mb=3072, warm_start=True, warm_preload=COURSE_PRELOAD)
    with Worker(source, limits) as worker:
        zygote = _zygote_of(worker)
        warm_limit, warm_room = worker.call("memory_room", [])
    with Worker(source, replace(limits, warm_start=False)) as worker:
        assert isinstance(_handle_of(worker), subprocess.Popen)
        cold_limit, cold_room = worker.call("memory_room", [])
    everything = sum(sizes["as"] for sizes in zygote.preloaded_mb.values())
    assert everything > 100, zygote.preloaded_mb  # the course's modules map hundreds of MB
    runtime = zygote.runtime_mb["as"]  # the runtime's own lazy imports, given back to every fork
    assert 0 < runtime < 200, zygote.runtime_mb
    assert cold_limit == 3072 and warm_limit - 3072 == (everything if allowed else 0) + runtime, zygote.preloaded_mb
    assert abs(warm_room - cold_room) <= ROOM_TOLERANCE_MB, (warm_room, cold_room, zygote.preloaded_mb)


def test_off_is_the_cold_start():
    with Worker(SOURCE, Limits(timeout_s=30, warm_start=False)) as worker:
        assert worker.call("whoami", [])[0] == 2
        assert isinstance(_handle_of(worker), subprocess.Popen)
