"""The student's run of the built autograder.py: isolation from the runner, a bare Python, a limit that fits the job."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from classroom50_helpers import (
    EXAMPLES,
    FIXTURES,
    can_switch_uid,
    python_reachable,
    run_autograder,
    runner_env,
    student_checkout,
)

from autograder.i18n import use_language
from autograder.integrations.classroom50 import entrypoint
from autograder.integrations.classroom50.build import build
from autograder.integrations.classroom50.schema import result_problems

JOB_LIMIT_S = 15 * 60  # Classroom50's grade job: timeout-minutes: 15


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bundle") / "autograder"
    build("transformer_mt", folder)
    return folder


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A scratch folder every user can read (pytest's own is mode 700): the notebook's uid runs this Python."""
    folder = Path(tempfile.mkdtemp(prefix="c50-bare-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_limit_leaves_the_job_time_for_its_other_steps(bundle: Path) -> None:
    """900 s for the child alone, after the install, could not fire inside a 15-minute job."""
    settings = json.loads((bundle / "assignment.json").read_text(encoding="utf-8"))
    assert settings["timeout_s"] + 3 * 60 <= JOB_LIMIT_S


def test_the_install_counts_against_the_limit(bundle: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = iter([["yaml"], []])
    calls: list[tuple[float, float]] = []
    monkeypatch.setattr(entrypoint, "missing_modules", lambda: next(missing))

    def slow_install(folder: Path) -> bool:
        time.sleep(1.5)
        return True

    monkeypatch.setattr(entrypoint, "install_requirements", slow_install)

    def child(folder: Path, workspace: Path, timeout_s: float, started: float) -> tuple[None, str]:
        calls.append((timeout_s, time.monotonic() - started))
        return None, "stopped here"

    monkeypatch.setattr(entrypoint, "run_child", child)
    checkout = student_checkout(tmp_path / "checkout", None)
    environ = runner_env(tmp_path / "output")
    assert entrypoint.grade(bundle, checkout, environ, time.monotonic()) == 0
    assert calls[0][0] == 720 and calls[0][1] >= 1.5


def test_the_child_waits_only_for_what_is_left_of_the_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    waited: list[float] = []

    class Hangs:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def wait(self, timeout: float | None = None) -> int:
            if timeout is None:
                return -9
            waited.append(timeout)
            raise subprocess.TimeoutExpired("autograder.py", timeout)

        def poll(self) -> int:
            return -9

    monkeypatch.setattr(entrypoint, "root_prefix", lambda: [])
    monkeypatch.setattr(subprocess, "Popen", Hangs)
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: None)
    (tmp_path / "bundle").mkdir()
    (tmp_path / "checkout").mkdir()
    with use_language("ko"):
        report, why = entrypoint.run_child(tmp_path / "bundle", tmp_path / "checkout", 720, time.monotonic() - 600)
    assert report is None and why == "720초 제한 초과" and 119 <= waited[0] <= 120


def _pyyaml_wheel(folder: Path) -> Path:
    """A wheel of the PyYAML this test run has installed, for an offline pip (files as installed)."""
    import importlib.metadata

    dist = importlib.metadata.distribution("PyYAML")
    lines = (dist.read_text("WHEEL") or "").splitlines()
    tag = next(line.split(": ", 1)[1] for line in lines if line.startswith("Tag: "))
    wheel = folder / f"PyYAML-{dist.version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in dist.files or []:
            if not str(file).startswith("..") and file.name not in ("INSTALLER", "REQUESTED", "direct_url.json"):
                archive.write(file.locate(), str(file))
    return wheel


@pytest.mark.e2e
def test_a_python_without_pyyaml_installs_it_before_importing_it(bundle: Path, open_tmp: Path) -> None:
    """A bare venv that lacks PyYAML (the other packages are this run's, through a .pth file, so that
    pip finds them installed) and a pip that reads only a local folder holding a PyYAML wheel."""
    if not can_switch_uid():
        pytest.skip("autograder.py runs the notebook as a fresh uid: needs root or sudo without a password")
    tmp_path = open_tmp
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", str(bare)], check=True)
    site = Path(next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()))
    others = tmp_path / "others"
    others.mkdir()
    for entry in site.iterdir():
        if not entry.name.lower().startswith(("yaml", "_yaml", "pyyaml")) and not entry.name.endswith(".pth"):
            (others / entry.name).symlink_to(entry)
    bare_site = next((bare / "lib").glob("python3*/site-packages"))
    for entry in bare_site.iterdir():  # keep the venv's own pip only: its setuptools is older than torch asks
        if not entry.name.startswith("pip"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    (bare_site / "others.pth").write_text(f"{others}\n", encoding="utf-8")
    probe = subprocess.run([str(bare / "bin" / "python"), "-c", "import yaml"], capture_output=True, check=False)
    assert probe.returncode != 0  # the control: this Python has no PyYAML
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _pyyaml_wheel(wheels)
    checkout = student_checkout(tmp_path / "checkout", EXAMPLES / "correct_original_format.ipynb")
    output = tmp_path / "output"
    output.touch()
    env = runner_env(output, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels), PIP_DISABLE_PIP_VERSION_CHECK="1")
    command = python_reachable([str(bare / "bin" / "python"), str(bundle / "autograder.py")])
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert result_problems(result) == [] and result["score"] == result["max-score"] == 80
    assert subprocess.run([str(bare / "bin" / "python"), "-c", "import yaml"], check=False).returncode == 0


@pytest.mark.e2e
def test_a_daemon_the_notebook_leaves_cannot_forge_the_result_or_the_status(bundle: Path, tmp_path: Path) -> None:
    """The notebook double-forks into a new session (out of reach of a process-group kill), looks for
    $GITHUB_OUTPUT in its ancestors' environments, and waits to rewrite result.json as 80/80."""
    if not can_switch_uid():
        pytest.skip("autograder.py runs the notebook as a fresh uid: needs root or sudo without a password")
    checkout = student_checkout(tmp_path / "checkout", FIXTURES / "escapes_and_forges.ipynb")
    output = tmp_path / "output"
    done = run_autograder(bundle, checkout, output, GITHUB_WORKSPACE=str(checkout))
    assert done.returncode == 0, done.stderr[-3000:]
    time.sleep(2)  # a surviving daemon polls every millisecond: it would have rewritten the file by now
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    body = (checkout / "release-body.md").read_text(encoding="utf-8")
    assert result_problems(result) == [] and result["max-score"] == 80
    assert result["score"] == 0 and "FORGED" not in json.dumps(result) + body
    assert output.read_text(encoding="utf-8").count("status=") == 1
    assert "status=failure\n" in output.read_text(encoding="utf-8")


def test_without_root_or_sudo_the_notebook_does_not_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    started: list[object] = []
    monkeypatch.setattr(entrypoint, "root_prefix", lambda: None)
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: started.append(args))
    with use_language("ko"):
        report, why = entrypoint.run_child(tmp_path, tmp_path, 720, time.monotonic())
    assert report is None and started == [] and "암호 없는 sudo" in why and "격리" in why


def test_a_child_still_root_when_the_limit_fires_is_reaped_once_it_is_the_uid(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first reap finds no process of the uid yet (the child has not become it): reap until it is gone."""
    reaps: list[list[str]] = []

    class SlowToDrop:
        polls = 0

        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def wait(self, timeout: float | None = None) -> int:
            raise subprocess.TimeoutExpired("autograder.py", timeout or 0)

        def poll(self) -> int | None:
            SlowToDrop.polls += 1
            return None if SlowToDrop.polls < 3 else -9

    monkeypatch.setattr(entrypoint, "root_prefix", lambda: [])
    monkeypatch.setattr(subprocess, "Popen", SlowToDrop)
    monkeypatch.setattr(subprocess, "run", lambda argv, **kwargs: reaps.append(argv))
    (tmp_path / "bundle").mkdir()
    (tmp_path / "checkout").mkdir()
    with use_language("ko"):
        report, why = entrypoint.run_child(tmp_path / "bundle", tmp_path / "checkout", 1, time.monotonic())
    assert report is None and why == "1초 제한 초과"
    assert len(reaps) == 3 and all(entrypoint.REAP_FLAG in argv for argv in reaps)


@pytest.mark.e2e
def test_a_daemon_that_kills_every_process_of_its_uid_is_killed_too(bundle: Path, tmp_path: Path) -> None:
    """It kills the checks and would kill a killer of its own uid: only root's repeated reaping ends it."""
    if not can_switch_uid():
        pytest.skip("autograder.py runs the notebook as a fresh uid: needs root or sudo without a password")
    checkout = student_checkout(tmp_path / "checkout", FIXTURES / "kills_the_killer.ipynb")
    done = run_autograder(bundle, checkout, tmp_path / "output", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert result_problems(result) == [] and result["score"] == 0
    assert _named("c50killer") == []


def _named(comm: str) -> list[int]:
    """The live processes named `comm` (prctl PR_SET_NAME)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            text = status.read_text(encoding="utf-8")
            if text.startswith(f"Name:\t{comm}\n") and "\nState:\tZ" not in text:
                found.append(int(status.parent.name))
    return found
