"""Nothing started in the sandbox outlives the grader: the ptrace/prctl attack via the CLI, Ray and
`otter run -a autograder.zip`, root and non-root."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from identities import IS_ROOT, as_user, processes_named, processes_of, throwaway_user

from autograder.notebook import cell_sources

# The Otter helpers sit beside the assignment tests, a folder pytest puts on sys.path only when it
# collects a test there.
sys.path.append(str(Path(__file__).resolve().parents[1] / "assignments"))
import otter_uploads

ROOT = Path(__file__).resolve().parents[2]
ATTACK = ROOT / "tests" / "fixtures" / "security" / "ptrace_outlives_jail.py"
# The same attack run while the notebook loads (a default argument): any assignment's grading runs it.
ATTACK_AT_LOAD = ROOT / "tests" / "fixtures" / "security" / "ptrace_outlives_jail_at_load.py"
SURVIVOR = "agsec-outlive"  # the attack's daemon names itself so
SETTLE_S = 5.0  # the kernel tears a pid namespace down one process at a time; generous under load
GRADER_TIMEOUT_S = 900


def _cleanup(pids: list[int]) -> None:
    """Kill what a failed run left (the daemon burns CPU on a shared machine)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def _left_behind(uid: int | None) -> list[int]:
    """Every process of the attack still alive after SETTLE_S: the daemon by name, and (for a
    throwaway grader) anything of its uid."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        found = set(processes_named(SURVIVOR)) | (set(processes_of(uid)) if uid is not None else set())
        if not found or time.monotonic() >= deadline:
            return sorted(found)
        time.sleep(0.2)


def _as_identity(name: str) -> Iterator[tuple[str, str | None, Path]]:
    """(identity, throwaway user or None, a work folder it may write)."""
    if not IS_ROOT:
        pytest.skip("runs as root (the non-root grader is a throwaway user made by root)")
    work = Path(tempfile.mkdtemp(prefix="agsec-outlive-"))
    os.chmod(work, 0o755)
    try:
        if name.startswith("root"):
            yield name, None, work
        else:
            with throwaway_user() as user:
                shutil.chown(work, user, user)
                yield "non-root", user, work
    finally:
        shutil.rmtree(work, ignore_errors=True)


# root: the default configuration, workers forked from the zygote; root-cold: --no-warm-start;
# non-root: the default configuration, which starts cold in the jail without root
@pytest.fixture(params=["root", "root-cold", "non-root"])
def identity(request: pytest.FixtureRequest) -> Iterator[tuple[str, str | None, Path]]:
    """(identity, throwaway user or None, a work folder it may write), for the CLI's gradings."""
    yield from _as_identity(request.param)


@pytest.fixture(params=["root", "non-root"])
def otter_identity(request: pytest.FixtureRequest) -> Iterator[tuple[str, str | None, Path]]:
    """The same for `otter run`, which grades with the default configuration (no flags)."""
    yield from _as_identity(request.param)


def _grader_argv(
    user: str | None, work: Path, route: str = "cli", assignment: str = "transformer_mt", cold: bool = False
) -> list[str]:
    target = ["--assignment", "attention_encoder", str(ATTACK_AT_LOAD), "--parts", "attention"]
    argv = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        *(target if assignment == "attention_encoder" else [str(ATTACK), "--parts", "masked_loss"]),
        "--out",
        str(work / "out"),
        "--json",
        "--language",
        "en",
        *(["--executor", "ray"] if route == "ray" else []),
        *(["--no-warm-start"] if cold else []),
    ]
    return as_user(user, argv) if user is not None else argv


def _env(work: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work),
        "TMPDIR": str(work),
        "LANG": "C.UTF-8",
        "OMP_WAIT_POLICY": "PASSIVE",
    }


@pytest.mark.slow
@pytest.mark.timeout(GRADER_TIMEOUT_S + 60)
@pytest.mark.parametrize(
    ("route", "assignment"), [("cli", "transformer_mt"), ("ray", "transformer_mt"), ("cli", "attention_encoder")]
)
def test_grading_leaves_nothing_running(identity: tuple[str, str | None, Path], route: str, assignment: str) -> None:
    if route == "ray":
        pytest.importorskip("ray")
    name, user, work = identity
    uid = pwd.getpwnam(user).pw_uid if user is not None else None
    done = subprocess.run(
        _grader_argv(user, work, route, assignment, cold=name == "root-cold"),
        env=_env(work),
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=GRADER_TIMEOUT_S,
    )
    left = _left_behind(uid)
    _cleanup(left)
    results = json.loads(done.stdout)
    text = json.dumps(results)
    assert "outlive attempt" in text, f"the attack did not run:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert results[0]["isolation"] == ("namespace" if name.startswith("root") else "userns")
    assert left == [], f"[{name}] processes outlived the grader: {left}; attack report: {text[:1500]}"
    assert "injected" not in text and "mem open" not in text, text[:1500]
    if route == "ray":  # attack 7: the Ray the batch started (under TMPDIR) kept no code others can read
        assert _grader_code_readable_by_others(work, skip=work / "out") == [], name
        assert list(work.glob("ray-*")) == [], f"[{name}] the batch's private Ray folder was left behind"


def _grader_code_readable_by_others(folder: Path, skip: Path) -> list[str]:
    """Python files (the grader's code, hidden checks, reference) under `folder` that other accounts
    may read: each folder on the way and the file itself open to "others"."""
    found = []
    for path in folder.rglob("*.py"):
        if path.is_relative_to(skip) or not path.is_file():
            continue
        chain = [path, *[p for p in path.parents if p.is_relative_to(folder) and p != folder]]
        if all(os.stat(p).st_mode & (0o004 if p == path else 0o001) for p in chain):
            found.append(str(path.relative_to(folder)))
    return found


@pytest.mark.slow
@pytest.mark.timeout(GRADER_TIMEOUT_S + 60)
def test_a_killed_grader_leaves_nothing_running(identity: tuple[str, str | None, Path]) -> None:
    """The grader is SIGKILLed while the attack's daemon runs: no cleanup code of the grader
    runs, the parent-death signals must end the sandbox."""
    name, user, work = identity
    uid = pwd.getpwnam(user).pw_uid if user is not None else None
    grader = subprocess.Popen(
        _grader_argv(user, work, cold=name == "root-cold"),
        env=_env(work),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + GRADER_TIMEOUT_S
        while not processes_named(SURVIVOR) and grader.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_named(SURVIVOR), "the attack's daemon never started"
        grader.kill()  # setpriv and unshare exec: this is the grader itself
        grader.wait(timeout=30)
        left = _left_behind(uid)
    finally:
        if grader.poll() is None:
            grader.kill()
    _cleanup(left)
    assert left == [], f"[{name}] processes outlived the killed grader: {left}"


@pytest.mark.slow
@pytest.mark.timeout(otter_uploads.SUBPROCESS_TIMEOUT_S + 60)
def test_otter_run_leaves_nothing_running(
    otter_identity: tuple[str, str | None, Path], autograder_zip: Path, multi30k_dir: Path
) -> None:
    """The attack uploaded as a notebook to `otter run -a autograder.zip` (Otter's runner, the plugin,
    the engine in a child process of the plugin)."""
    name, user, work = otter_identity
    uid = pwd.getpwnam(user).pw_uid if user is not None else None
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cell_sources(ATTACK)])
    upload, archive, out = work / "hw.ipynb", work / autograder_zip.name, work / "otter"
    nbformat.write(notebook, str(upload))
    shutil.copyfile(autograder_zip, archive)  # the session's copy is in a folder only root may read
    out.mkdir()
    if user is not None:
        for path in (upload, archive, out):
            shutil.chown(path, user, user)
    try:
        outcome = otter_uploads.otter_run(
            upload,
            archive,
            out,
            multi30k_dir,
            as_user=(lambda argv: as_user(user, argv)) if user is not None else None,
            env=_env(work),
        )
    finally:
        left = _left_behind(uid)
        _cleanup(left)
    text = json.dumps(outcome.document)
    assert "outlive attempt" in text, f"the attack did not run:\n{text[:2000]}\n{outcome.log[-3000:]}"
    assert left == [], f"[{name}] processes outlived `otter run`: {left}; attack report: {text[:1500]}"
    assert "ptrace attach:" in text, text[:1500]
    assert "injected" not in text and "mem open" not in text, text[:1500]
