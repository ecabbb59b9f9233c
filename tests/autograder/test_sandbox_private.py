"""Nothing per-process in the kernel is shared between jailed workers or with the grader.

A grader whose session keyring holds a token (a systemd service, an ssh login with pam_keyinit)
starts two workers at once (fixtures/worker/shared_objects_driver.py): the first plants a key in its
session and user keyrings, SysV message queue, semaphore and shared memory, an abstract unix socket
and a /dev/shm file; the second looks for them, and for the grader's token. The control runs the
same probe in two plain processes of the same grader, where every object is shared. Root warm
(forked from the zygote), root cold, and a throwaway non-root grader (bubblewrap).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autograder.sandbox import Limits
from autograder.sandbox.plan import choose_isolation

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "fixtures" / "worker" / "shared_objects_driver.py"
sys.path.append(str(ROOT / "tests" / "security"))  # the throwaway users' helpers
from identities import IS_ROOT, as_user, holding_checkout, throwaway_user  # noqa: E402

GRADER_TOKEN, SECRET_ENV = "token-5f1d0c", "AUTOGRADER_GRADER_SECRET"  # as the driver sets them
OBJECTS = ("msg", "sem", "shm", "abstract_socket", "posix_shm")


def _drive(mode: str, work: Path, user: str | None = None) -> dict[str, Any]:
    """Run the driver (as `user` when given). Returns: its JSON."""
    argv = [sys.executable, str(DRIVER), mode]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work), "LANG": "C.UTF-8"}
    done = subprocess.run(
        # as another user: while no other tier's root grading has the checkout closed (identities.py)
        holding_checkout("--shared", as_user(user, argv)) if user else argv,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _assert_shared_in_the_control(control: dict[str, Any]) -> None:
    """The probe is not vacuous: two plain processes of the same grader share every object."""
    assert set(control["planted"].values()) == {0}, control["planted"]
    found = control["found"]
    assert found["grader_key"] == GRADER_TOKEN and found["session_key"] == "control", found
    assert found["proc_keys"] and all(found[name] for name in OBJECTS), found
    assert control["views"]["environ"].get(SECRET_ENV) == GRADER_TOKEN


def _assert_private_in_the_jail(jailed: dict[str, Any]) -> None:
    planted = jailed["planted"]
    assert planted["session_key"] == planted["user_key"] == errno.EPERM, planted  # the seccomp filter
    assert {planted[name] for name in OBJECTS} == {0}, planted  # made, in the worker's own namespaces
    for found in (jailed["found"], jailed["found_by_first"]):  # the sibling's, the grader's
        assert found["grader_key"] is None and found["session_key"] is None and found["user_key"] is None, found
        assert found["proc_keys"] == [] and found["paths"] == [], found  # not even listed in /proc/keys
    assert not any(jailed["found"][name] for name in OBJECTS), jailed["found"]
    for view in jailed["views"]:
        assert view["pids"] == [1, 2], view["pids"]  # the reaper and itself
        assert not any(Path(m).is_relative_to(p) for m in view["mounts"] for p in jailed["paths"]), view
        assert set(view["fds"]) <= {"pipe", "/dev/null", "(closed)", "socket"}, view["fds"]
        assert SECRET_ENV not in view["environ"] and GRADER_TOKEN not in json.dumps(view["environ"])
    # the socket is the first worker's own listening probe; the second holds none
    assert "socket" not in jailed["views"][1]["fds"]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "grader"
    folder.mkdir()
    return folder


@pytest.mark.skipif(not IS_ROOT or choose_isolation(Limits()) != "namespace", reason="the root jail")
@pytest.mark.parametrize("mode", ["warm", "cold"])
def test_root_workers_share_no_kernel_object_with_each_other_or_the_grader(mode: str, work: Path) -> None:
    result = _drive(mode, work)
    _assert_shared_in_the_control(result["control"])
    assert result["jailed"]["isolation"] == "namespace"
    assert result["jailed"]["forked"] == [mode == "warm"] * 2
    _assert_private_in_the_jail(result["jailed"])


def test_non_root_workers_share_no_kernel_object_with_each_other_or_the_grader(work: Path) -> None:
    with throwaway_user() as user:
        shutil.chown(work, user, user)
        os.chmod(work, 0o700)
        result = _drive("cold", work, user)
    _assert_shared_in_the_control(result["control"])
    if result["jailed"]["isolation"] != "userns":
        pytest.skip(f"bubblewrap does not run here for a non-root user ({result['jailed']['isolation']})")
    _assert_private_in_the_jail(result["jailed"])
