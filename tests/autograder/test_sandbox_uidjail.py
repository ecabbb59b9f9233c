"""The jail without namespaces: chosen when root may not make namespaces; files closed, processes killed, no network."""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.sandbox import Limits, choose_isolation, plan, uidjail
from autograder.worker_runtime import seccomp

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="switching to a bare uid needs root")
UID = (1 << 20) + 4242  # a bare uid in the range the sandbox draws from


def _as_uid(uid: int | None, probe) -> int:
    """Run probe() in a forked child that became `uid` (None: stays who it is).

    Returns: what probe returned (an int; -1 when it raised).
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = -1
        try:
            if uid is not None:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            code = probe()
        finally:
            os.write(write_end, struct.pack("=i", code))
            os._exit(0)
    os.close(write_end)
    data = os.read(read_end, 4)
    os.close(read_end)
    os.waitpid(pid, 0)
    return int(struct.unpack("=i", data)[0])


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A folder straight under /tmp (mode 1777) for the tests that seal: sealing opens the way down
    to what it keeps, and under pytest's shared base (/tmp/pytest-of-root, 0700) it would change and
    put back that folder's mode under the feet of the tests beside these (CI's tiers run side by
    side: a root grading of the attack corpus in this jail seals its own folders there too)."""
    path = Path(tempfile.mkdtemp(prefix="uidjail-test-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _readable(path: Path) -> int:
    try:
        path.read_bytes()
        return 1
    except OSError:
        return 0


def test_root_whose_namespaces_are_refused_gets_the_bare_uid_jail(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # plan.py asks os itself
    monkeypatch.setattr(plan.HostState, "namespace_probe", False)  # as unshare in a default container
    monkeypatch.setattr(plan.HostState, "uid_switch_broken", False)
    assert choose_isolation(Limits()) == "uid"
    assert choose_isolation(Limits(isolation="weak")) == "uid"
    with pytest.raises(plan.IsolationUnavailable):
        choose_isolation(Limits(isolation="namespace"))
    assert choose_isolation(Limits(isolation="weak", sandbox_uid=65534)) == "weak"  # killed by uid: its own
    monkeypatch.setattr(plan.HostState, "uid_switch_broken", True)  # then nothing but weak is left
    assert choose_isolation(Limits(isolation="weak")) == "weak"


@pytest.mark.parametrize(
    ("euid", "wanted", "reason"),
    [
        (0, "namespace", "the root jail failed"),
        (0, "userns", "the user-namespace jail is for graders that are not root"),
        (1000, "namespace", "the user-namespace jail needs a non-root grader"),
        (1000, "auto", r"unprivileged user namespaces are not available \(no bwrap here\)"),
    ],
)
def test_a_refusal_names_why_no_jail_could_be_made(monkeypatch, euid, wanted, reason):
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    monkeypatch.setattr(plan.HostState, "namespace_probe", False)
    monkeypatch.setattr(plan.HostState, "userns_problem", "no bwrap here")
    with pytest.raises(plan.IsolationUnavailable, match=f"without a jail: {reason}"):
        choose_isolation(Limits(isolation=wanted, sandbox_uid=65534))


@needs_root
def test_sealing_closes_the_grader_files_but_the_way_to_python(tmp_path, monkeypatch):
    monkeypatch.setattr(uidjail, "CHANGED", {})
    monkeypatch.setattr(uidjail, "_kept", [])
    monkeypatch.setattr(uidjail, "_closed", set())
    monkeypatch.setattr(uidjail, "CONTAINER_PATHS", ())
    project = tmp_path / "project"
    for relative in (
        "assignments/a/checks/test_x.py",
        "assignments/a/reference/loss.py",
        ".venv/lib/site.py",
        "README.md",
    ):
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text("secret")
    upload = tmp_path / "uploads" / "other.ipynb"
    upload.parent.mkdir()
    upload.write_text("secret")
    for path in (tmp_path, *tmp_path.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    tmp_path.chmod(0o700)  # like /root: others may not even pass through
    # The CLI closes its uploads first (here `grade .` in the project too), then a worker starts:
    # the way down to its venv is opened, and the rest of what was closed stays closed.
    uidjail.close_to_workers([upload.parent, project])
    uidjail.seal([], [str(project / ".venv")])

    def probe() -> int:
        seen = [_readable(project / ".venv/lib/site.py")]
        seen += [
            _readable(project / p)
            for p in ("assignments/a/checks/test_x.py", "assignments/a/reference/loss.py", "README.md")
        ]
        seen.append(_readable(upload))
        try:
            os.listdir(project)
            seen.append(1)
        except OSError:
            seen.append(0)
        return int("".join(map(str, seen)), 2)

    assert _as_uid(UID, probe) == 0b100000  # the venv only: no check, reference, file, upload, listing
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o701  # the way down opened for passing only
    uidjail.close_to_workers([upload])
    assert stat.S_IMODE(upload.stat().st_mode) == 0o640
    for path, mode in uidjail.CHANGED.items():  # what a test puts back
        os.chmod(path, mode)
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o700


@needs_root
def test_a_venv_linked_from_a_closed_folder_runs_through_its_real_path(tmp_path, monkeypatch):
    """Gradescope's layout on the grading image: /autograder/venv links to /opt/grading-venv and the
    jail closes /autograder. Started by the linked name, the worker's site-packages were reached
    through /autograder: once it was the bare uid, nothing installed could be imported."""
    monkeypatch.setattr(uidjail, "CHANGED", {})
    monkeypatch.setattr(uidjail, "_kept", [])
    monkeypatch.setattr(uidjail, "_closed", set())
    monkeypatch.setattr(uidjail, "CONTAINER_PATHS", ())
    real = tmp_path / "opt" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(real)], check=True)
    site_packages = next(real.glob("lib/python3*/site-packages"))
    (site_packages / "installed_marker.py").write_text("")
    closed = tmp_path / "autograder"
    closed.mkdir()
    (closed / "venv").symlink_to(real)
    uidjail.seal([str(closed)], [str(real)])
    monkeypatch.setattr(sys, "executable", str(closed / "venv" / "bin" / "python"))
    argv = plan.build_command("uid", SimpleNamespace(lib=tmp_path), tmp_path / "config.json", [])  # type: ignore[arg-type]
    # As the bootstrap does: start as root, become the bare uid, then import what the venv holds.
    drop = f"import os; os.setgroups([]); os.setresgid({UID}, {UID}, {UID}); os.setresuid({UID}, {UID}, {UID})"
    try:
        for python, imported in ((sys.executable, False), (argv[0], True)):
            done = subprocess.run([python, *plan.PYTHON_FLAGS, "-c", f"{drop}; import installed_marker"], check=False)
            assert (done.returncode == 0) is imported, python
    finally:
        for path, mode in uidjail.CHANGED.items():
            os.chmod(path, mode)
    assert argv[0] == str(real / "bin" / "python")


@needs_root
def test_every_process_and_shared_file_of_the_uid_goes():
    left = [Path(f"/tmp/uidjail-test-{os.getpid()}"), Path(f"/dev/shm/uidjail-test-{os.getpid()}")]

    def start_daemon() -> int:
        for path in left:
            path.write_text("the worker was here")
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.fork() == 0:
            libc.setsid()
            if libc.fork() == 0:
                time.sleep(60)
            libc._exit(0)
        time.sleep(0.5)
        return 0

    def processes_of(uid: int) -> list[str]:
        return [p for p in os.listdir("/proc") if p.isdigit() and uidjail._owner(int(p)) == uid]

    neighbour = UID + 1  # a worker beside it, under its own uid

    def sleeper() -> int:
        if os.fork() == 0:
            time.sleep(60)
        return 0

    _as_uid(neighbour, sleeper)
    _as_uid(UID, start_daemon)
    assert processes_of(UID) and processes_of(neighbour), "the daemons did not start"
    uidjail.kill_user(UID)
    time.sleep(0.2)
    assert processes_of(UID) == [] and processes_of(neighbour) != []  # the neighbour lives on
    uidjail.kill_user(neighbour)
    assert processes_of(neighbour) == []
    assert [path for path in left if path.exists()] == []  # its files in the shared dirs went with it


@pytest.mark.skipif(platform.machine() not in seccomp.ARCHITECTURES, reason="no table for this machine")
def test_the_filter_without_network_leaves_only_unix_sockets():
    def probe() -> int:
        seccomp.install(network=False)
        refused = 0
        for bit, family in enumerate((socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)):
            try:
                socket.socket(family, socket.SOCK_DGRAM).close()
            except PermissionError:
                refused |= 1 << bit
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()  # raises (-1 reported) if refused
        socket.socketpair()[0].close()
        return refused

    assert _as_uid(None, probe) == 0b111
