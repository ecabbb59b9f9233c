"""The attack corpus (tests/fixtures/security/) against the grader, as root and as a non-root user: nothing gained."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from identities import as_container_root, in_default_container
from identities import as_user as _as_user

from autograder.i18n import t
from autograder.sandbox import IsolationUnavailable, Limits, choose_isolation

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DRIVER = HERE / "attack_driver.py"
MARKERS = Path("/tmp/autograder-security-markers")
ATTACKS = [
    "ctypes_read_reference",
    "read_hidden_checks",
    "network_loopback",
    "daemon_outlives_worker",
    "ptrace_outlives_jail",
    "kill_everything",
    "memory_hogs",
    "fork_bomb",
    "environment_secrets",
    "write_outside",
    "read_other_upload",
]
IS_ROOT = os.geteuid() == 0


# root-warm: workers forked from the zygote (worker.warm_start, the default); root-cold: each worker
# started afresh; non-root: the default configuration, which starts cold in the jail without root.
# root-container: root with only Docker's default capabilities (namespaces refused, as in a default
# container): the jail without namespaces, a bare uid (uidjail.py).
# podman-default: the grader as root in a real default podman container (--network none).
IDENTITIES = {
    "root-warm": "warm",
    "root-cold": "cold",
    "non-root": "warm",
    "root-container": "warm",
    "podman-default": "warm",
}
EXPECTED_ISOLATION = {
    "root-warm": "namespace",
    "root-cold": "namespace",
    "non-root": "userns",
    "root-container": "uid",
    "podman-default": "uid",
}


@pytest.fixture(scope="module", params=list(IDENTITIES))
def corpus(request, tmp_path_factory):
    """Run every attack once as this identity; returns the driver's matrix {attack: counts}."""
    identity = request.param
    if not IS_ROOT:
        pytest.skip("the corpus creates a throwaway user and runs as root; run it as root")
    user = None
    work = Path(tempfile.mkdtemp(prefix="agsec-"))
    os.chmod(work, 0o755)
    if identity == "non-root":
        if shutil.which("useradd") is None or shutil.which("setpriv") is None:
            pytest.skip("needs useradd and setpriv to create and become a throwaway user")
        user = f"agsec{secrets.token_hex(3)}"
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
            check=True,
            capture_output=True,
        )
    try:
        shutil.rmtree(MARKERS, ignore_errors=True)
        MARKERS.mkdir()
        tmp = work / "tmp"
        tmp.mkdir()
        if user is not None:
            for path in (MARKERS, tmp, work):
                shutil.chown(path, user, user)
        token = "ghp_fake" + secrets.token_hex(16)
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp),
            "TMPDIR": str(tmp),
            "LANG": "C.UTF-8",
            "OMP_WAIT_POLICY": "PASSIVE",
            "AUTOGRADER_FAKE_TOKEN": token,
            "GITHUB_TOKEN": token,
        }
        out = work / "matrix.json"
        argv = [sys.executable, str(DRIVER), str(out), IDENTITIES[identity], *ATTACKS, "control_honest"]
        if user is not None:
            argv = _as_user(user, argv)
        elif identity == "root-container":
            argv = as_container_root(argv, ROOT)
        elif identity == "podman-default":
            argv = in_default_container(argv, ROOT, work, env)
        done = subprocess.run(argv, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=1500)
        assert done.returncode == 0 and out.exists(), (
            f"the grader did not survive the corpus (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        data = json.loads(out.read_text())
        assert (data["uid"] == 0) == (identity != "non-root")
        leftovers = _processes_of(user) if user is not None else []
        print(f"\n[{identity}] " + json.dumps(data["matrix"], indent=None))  # the matrix, with -s
        yield identity, data["matrix"], leftovers
    finally:
        shutil.rmtree(MARKERS, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
        if user is not None:
            subprocess.run(["userdel", user], capture_output=True)


def _processes_of(user: str) -> list[int]:
    uid = int(subprocess.run(["id", "-u", user], capture_output=True, text=True, check=True).stdout)
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                found.append(int(name))
        except OSError:
            continue
    return found


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the module fixture grades the whole corpus (minutes when loaded)
def test_the_points_measure_sees_a_working_solution(corpus):
    _, matrix, _ = corpus
    assert matrix["control_honest"]["points_gained"] == 10, matrix["control_honest"]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the module fixture grades the whole corpus (minutes when loaded)
def test_every_grading_ran_in_a_jail(corpus):
    identity, matrix, _ = corpus
    assert {row["isolation"] for row in matrix.values()} == {EXPECTED_ISOLATION[identity]}


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the module fixture grades the whole corpus (minutes when loaded)
def test_every_grading_started_warm_or_cold_as_configured(corpus):
    identity, matrix, _ = corpus
    assert {row["warm"] for row in matrix.values()} == {identity == "root-warm"}, matrix


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the module fixture grades the whole corpus (minutes when loaded)
@pytest.mark.parametrize("attack", ATTACKS)
def test_attack_gains_nothing(corpus, attack):
    _identity, matrix, leftovers = corpus
    row = matrix[attack]
    assert row["points_gained"] == 0, row
    assert row["files_written_outside"] == [], row
    assert row["processes_surviving"] == 0, row
    assert row["secrets_read"] == 0, row
    assert row["loopback_connections"] == 0, row
    assert leftovers == [], f"processes of the throwaway user outlived the grader: {leftovers}"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the module fixture grades the whole corpus (minutes when loaded)
def test_tree_memory_attack_is_reported_as_memory(corpus):
    _, matrix, _ = corpus
    messages = matrix["memory_hogs"]["messages"]
    worded = [t("worker.ended.memory_tree", language=language, limit=1536) for language in ("ko", "en")]
    assert any(text in m for m in messages for text in worded), matrix["memory_hogs"]


def test_refusal_without_a_jail_is_one_line(monkeypatch):
    from autograder.sandbox import plan

    monkeypatch.setattr(plan.HostState, "namespace_broken", True)
    monkeypatch.setattr(plan.HostState, "userns_problem", "bwrap: No permissions to create a new namespace")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # plan.py asks os itself
    with pytest.raises(IsolationUnavailable) as info:
        choose_isolation(Limits())
    assert "\n" not in str(info.value) and "worker.isolation: weak" in str(info.value)
    assert "No permissions to create a new namespace" in str(info.value)
    assert choose_isolation(Limits(isolation="weak")) == "weak"
