"""`otter run`'s private copy of an upload is removed on every exit path: done, failed, crashed, killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from autograder.integrations import otter_upload

ROOT = Path(__file__).resolve().parents[3]


def _upload(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "hw.ipynb").write_text('{"cells": []}')
    (folder / "tests").mkdir()
    return folder / "hw.ipynb"


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder of this test's own (the copies are looked for in it)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    return folder


def _copies(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{otter_upload.TEMP_PREFIX}*"))


def test_remove_deletes_the_private_copy(tmp_path: Path, private_tmp: Path) -> None:
    made = otter_upload.quarantine_for_plugin(_upload(tmp_path / "submission"), None)
    assert made.submission is not None and made.submission.is_file() and len(_copies(private_tmp)) == 1
    made.remove()
    assert _copies(private_tmp) == []


def test_the_plugin_removes_it_when_grading_fails(
    tmp_path: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("otter")
    from autograder import otter_bridge

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(otter_bridge, "find_engine_root", broken)
    submission = _upload(tmp_path / "submission")
    plugin = otter_bridge.EnginePlugin(str(submission), None, {})
    plugin.before_grading(type("Config", (), {"autograder_dir": None})())
    assert len(_copies(private_tmp)) == 1

    class Results:
        def clear_results(self) -> None: ...

        def set_output(self, text: str) -> None: ...

    plugin.after_grading(Results())
    assert _copies(private_tmp) == []


CRASH = """
import sys
from pathlib import Path
from autograder.integrations import otter_upload
made = otter_upload.quarantine_for_plugin(Path(sys.argv[1]), None)
print(made.folder.parent, flush=True)
if sys.argv[2] == "raise":
    raise RuntimeError("Otter crashed between before_grading and after_grading")
import os, time
time.sleep(60)  # killed here
"""


def test_a_crash_leaves_no_copy(tmp_path: Path, private_tmp: Path) -> None:
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    done = subprocess.run(
        [sys.executable, "-c", CRASH, str(_upload(tmp_path / "submission")), "raise"],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Otter crashed" in done.stderr
    assert done.stdout.strip().startswith(str(private_tmp)) and _copies(private_tmp) == []


def test_a_killed_process_copy_is_removed_by_the_next_one(tmp_path: Path, private_tmp: Path) -> None:
    env = {**os.environ, "TMPDIR": str(private_tmp)}
    process = subprocess.Popen(
        [sys.executable, "-c", CRASH, str(_upload(tmp_path / "first")), "sleep"],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    left = Path(process.stdout.readline().strip())
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert left.is_dir()  # nothing runs in a killed process
    alive = Path(tempfile.mkdtemp(prefix=f"{otter_upload.TEMP_PREFIX}{os.getpid()}-"))  # a live owner's
    made = otter_upload.quarantine_for_plugin(_upload(tmp_path / "second"), None)
    assert not left.exists() and alive.exists()
    made.remove()
    assert _copies(private_tmp) == [alive]
