"""The attack corpus (tests/fixtures/security) inside a default container of the grading image: no
extra capabilities, Docker's default seccomp profile, no network; as root and as a non-root user."""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import tarfile

import pytest
from container_tools import IMAGE, REPO, docker, docker_env, leftovers, require_engine

pytestmark = [pytest.mark.slow, pytest.mark.container]

# The corpus's attacks that apply in a container (all of tests/security's list: none needs the host).
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
]
# What the driver needs: the engine, the assignments, the driver and the attack notebooks.
PROJECT_ITEMS = ("autograder", "assignments", "mtkit", "grader.yml", "requirements.lock",
                 "tests/security/attack_driver.py", "tests/fixtures/security")  # fmt: skip
# worker.isolation for the driver's gradings: empty, the engine's default (what a zip grades with);
# `weak` measures the best-effort fallback (the "before" of docs/OTTER.md's table).
ISOLATION = os.environ.get("CONTAINER_ATTACK_ISOLATION", "")
# Root: the grader Otter and Gradescope run. A non-root grader in a default container has no jail
# (namespaces refused, and the jail without namespaces needs root to switch uid): the engine refuses
# to grade there (IsolationUnavailable, measured in the clean-clone run of 2026-12-07), so that
# identity measures nothing until it has one.
IDENTITIES = ("root",)


def project_tar() -> bytes:
    """The project items as a tar archive rooted at project/ (readable by every user, as installed)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for item in PROJECT_ITEMS:
            tar.add(REPO / item, f"project/{item}", filter=readable)
    return buffer.getvalue()


def readable(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """Owned by root, readable by all; caches left out."""
    if "__pycache__" in info.name:
        return None
    info.uid = info.gid = 0
    info.mode |= 0o755 if info.isdir() else 0o644
    return info


@pytest.fixture(scope="module", params=IDENTITIES)
def matrix(request: pytest.FixtureRequest) -> tuple[str, dict]:
    """Run the whole corpus once inside a fresh default container as this identity."""
    require_engine()
    identity = request.param
    before = leftovers(IMAGE)
    container = docker("create", "--network", "none", IMAGE, "sleep", "infinity").strip()
    try:
        subprocess.run(["docker", "cp", "-", f"{container}:/"], input=project_tar(), env=docker_env(), check=True)
        docker("start", container)
        user = ["--user", "root"]
        if identity == "non-root":
            docker("exec", container, "useradd", "--system", "--no-create-home", "agsec")
            # The driver checks for files planted in /root (as on a host, where /root is searchable).
            docker("exec", container, "chmod", "0755", "/root")
            user = ["--user", "agsec"]
        token = "ghp_fake" + secrets.token_hex(16)
        work = "/tmp/agsec-" + secrets.token_hex(4)
        docker("exec", container, "mkdir", "-m", "1777", work, "/tmp/autograder-security-markers")
        env = ["-e", f"TMPDIR={work}", "-e", f"HOME={work}", "-e", f"AUTOGRADER_FAKE_TOKEN={token}",
               "-e", f"GITHUB_TOKEN={token}", "-e", "OMP_WAIT_POLICY=PASSIVE", "-e", "LANG=C.UTF-8",
               "-e", f"AUTOGRADER_ATTACK_ISOLATION={ISOLATION}", "-w", "/project"]  # fmt: skip
        driver = ["/opt/grading-venv/bin/python", "tests/security/attack_driver.py", f"{work}/matrix.json", "cold"]
        done = subprocess.run(
            ["docker", "exec", *user, *env, container, *driver, *ATTACKS, "control_honest"],
            env=docker_env(), capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (
            f"the driver died ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        result = json.loads(docker("exec", container, "cat", f"{work}/matrix.json"))
        # Processes of the non-root user still alive after the driver ended (the outliving attacks).
        # Zombies are dead (the container's PID 1, `sleep`, reaps nothing): not counted.
        ps = docker("exec", container, "ps", "-eo", "user=,stat=,pid=,args=")
        rows = [line.split(None, 3) for line in ps.splitlines()]
        survivors = [row for row in rows if identity == "non-root" and row[0] == "agsec" and not row[1].startswith("Z")]
    finally:
        docker("rm", "-f", container, check=False)
    rows = result["matrix"]
    held = {name: held_row(row) for name, row in rows.items() if name in ATTACKS}
    print(f"\n[{identity}, isolation {ISOLATION or 'default'}] held: {json.dumps(held)}\nsurvivors: {survivors}\n"
          + json.dumps(rows, indent=1, ensure_ascii=False)[:20000])  # fmt: skip
    assert leftovers(IMAGE) == before
    return identity, {"rows": rows, "survivors": survivors}


def held_row(row: dict) -> bool:
    """An attack held: no points, nothing written outside, no survivor, no secret, no connection."""
    return (row["points_gained"] == 0 and row["files_written_outside"] == [] and row["processes_surviving"] == 0
            and row["secrets_read"] == 0 and row["loopback_connections"] == 0)  # fmt: skip


@pytest.mark.timeout(2400)
def test_the_honest_control_is_graded_in_the_container(matrix: tuple[str, dict]) -> None:
    _identity, found = matrix
    row = found["rows"]["control_honest"]
    assert row["points_gained"] == 10, row


@pytest.mark.timeout(2400)
@pytest.mark.parametrize("attack", ATTACKS)
def test_attack_holds_in_a_default_container(matrix: tuple[str, dict], attack: str) -> None:
    _identity, found = matrix
    row = found["rows"][attack]
    assert held_row(row), row
    assert found["survivors"] == [], found["survivors"]
