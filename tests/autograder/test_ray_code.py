"""The grader's code as private bytes for Ray tasks: the archive, its seal, the private folder and stale folders.

Fast: no Ray is started (the one test that loads a cloudpickle needs the `ray` package installed).
"""

from __future__ import annotations

import fcntl
import io
import os
import signal
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from autograder.executors import ray_code

CODE = Path(__file__).resolve().parents[1] / "fixtures" / "ray_code" / "code"
EXCLUDES = ["tests", "*.ipynb", "**/__pycache__"]


def names(archive: bytes) -> list[str]:
    return zipfile.ZipFile(io.BytesIO(archive)).namelist()


def test_the_archive_leaves_out_the_excluded_and_is_the_same_every_time() -> None:
    archive = ray_code.build_archive(CODE, EXCLUDES)
    assert names(archive) == ["shippedpkg/__init__.py", "shippedpkg/entry.py", "shippedpkg/data/nested/values.txt"]
    assert ray_code.build_archive(CODE, EXCLUDES) == archive


def test_the_sealed_archive_is_not_the_code_and_opens_with_its_key_only() -> None:
    archive = ray_code.build_archive(CODE, EXCLUDES)
    sealed, key = ray_code.seal(archive)
    assert len(sealed) == len(archive) and b"shippedpkg" not in sealed
    assert ray_code._xor_keystream(sealed, key) == archive
    assert ray_code._xor_keystream(sealed, bytes(len(key))) != archive
    assert ray_code.seal(archive)[1] != key  # a new key per batch


def test_the_code_is_imported_from_a_private_folder_that_is_gone_afterwards() -> None:
    archive = ray_code.build_archive(CODE, EXCLUDES)
    path_before, cwd_before = list(sys.path), os.getcwd()
    with ray_code.private_code(archive) as folder:
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        modes = {
            os.path.relpath(os.path.join(d, n), folder): stat.S_IMODE(os.stat(os.path.join(d, n)).st_mode)
            for d, dirs, files in os.walk(folder)
            for n in dirs + files
        }
        assert modes == {
            ".in-use": 0o600,
            "shippedpkg": 0o700,
            "shippedpkg/__init__.py": 0o600,
            "shippedpkg/entry.py": 0o600,
            "shippedpkg/data": 0o700,
            "shippedpkg/data/nested": 0o700,
            "shippedpkg/data/nested/values.txt": 0o600,
        }
        from shippedpkg import entry  # type: ignore[import-not-found,unused-ignore]  # found only when mypy also reads the fixture folder

        assert entry.where("x")[:2] == (os.path.join(folder, "shippedpkg", "entry.py"), folder)
    assert not os.path.exists(folder)
    assert "shippedpkg" not in sys.modules and "shippedpkg.entry" not in sys.modules
    assert sys.path == path_before and os.getcwd() == cwd_before


def test_a_task_calls_its_entry_from_the_unpacked_copy() -> None:
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    sealed, key = ray_code.seal(ray_code.build_archive(CODE, EXCLUDES))
    where, cwd, args = ray_code.run_with_private_code(
        sealed, key, "shippedpkg.entry:where", cloudpickle.dumps(("first",)), 2, "three"
    )
    assert args == ("first", 2, "three")
    assert where == os.path.join(cwd, "shippedpkg", "entry.py") and os.path.basename(cwd).startswith(ray_code.PREFIX)
    assert not os.path.exists(cwd)


@pytest.mark.filterwarnings("ignore:SHOUTED")
def test_a_task_prints_nothing_to_the_nodes_logs_and_its_error_quotes_no_code(
    capfd: pytest.CaptureFixture[str],
) -> None:
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    sealed, key = ray_code.seal(ray_code.build_archive(CODE, EXCLUDES))
    with pytest.raises(ray_code.PrivateTaskError) as raised:
        ray_code.run_with_private_code(sealed, key, "shippedpkg.entry:shout_and_fail", cloudpickle.dumps(("SHOUTED",)))
    message = str(raised.value)
    assert message.startswith("ValueError: the check failed") and "entry.py:" in message
    assert "QUOTED-IF-LEAKED" not in message and raised.value.__cause__ is None
    printed = capfd.readouterr()
    assert "SHOUTED" not in printed.out + printed.err
    print("after")  # the streams are back
    assert capfd.readouterr().out == "after\n"


def make_folder(base: Path, name: str, locked_file: bool = True) -> Path:
    folder = base / f"{ray_code.PREFIX}{name}"
    folder.mkdir(mode=0o700)
    if locked_file:
        (folder / ray_code.LOCK_NAME).touch()
    return folder


def test_only_folders_whose_task_is_gone_are_removed(tmp_path: Path) -> None:
    ended = make_folder(tmp_path, "ended")
    running = make_folder(tmp_path, "running")
    holder = os.open(running / ray_code.LOCK_NAME, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    just_made = make_folder(tmp_path, "just-made", locked_file=False)
    long_ago = make_folder(tmp_path, "long-ago", locked_file=False)
    old = time.time() - ray_code.UNLOCKED_GRACE_S - 60
    os.utime(long_ago, (old, old))
    other = tmp_path / "autograder-worker-x"
    other.mkdir()
    try:
        removed = ray_code.remove_stale_folders(str(tmp_path))
    finally:
        os.close(holder)
    assert sorted(removed) == sorted([str(ended), str(long_ago)])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, just_made.name, other.name])


KILLED_TASK = """
import os, signal, sys
from autograder.executors import ray_code
with ray_code.private_code(open(sys.argv[1], "rb").read()) as folder:
    print(folder, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_folder_of_a_killed_task_is_removed_by_the_next_one(tmp_path: Path) -> None:
    archive = tmp_path / "code.zip"
    archive.write_bytes(ray_code.build_archive(CODE, EXCLUDES))
    base = tmp_path / "tmp"
    base.mkdir()
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_TASK, str(archive)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(base)},
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL
    left = Path(killed.stdout.strip())
    assert left.parent == base and (left / "shippedpkg" / "entry.py").is_file()
    assert ray_code.remove_stale_folders(str(base)) == [str(left)]
    assert list(base.iterdir()) == []
