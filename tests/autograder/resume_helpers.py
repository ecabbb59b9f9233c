"""Helpers of the kill-and-resume tests: run the CLI with the counting engine, kill it, compare runs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from autograder.reports.class_view import CLASS_JSON

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# The CLI with `autograder.engine` replaced by the counting stand-in (spawned pool workers find the
# module too: spawn hands the children this process's sys.path).
DRIVER = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); import counting_engine; "
    "sys.modules['autograder.engine'] = counting_engine; "
    "from autograder.cli import run; run(sys.argv[1:])"
)


def _as_from_a_terminal() -> None:
    # A grader started from a terminal takes Ctrl-C; a test run launched in the background (`cmd &`
    # in a script) hands its children SIGINT ignored, which Python then keeps ignoring.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_grader(args: Sequence[str], count_file: Path, engine: str = "fake", entry: str = "-c") -> subprocess.Popen:
    """Start `python -m autograder grade ARGS` (counting engine) in its own process group, with
    SIGINT's default disposition whatever this test run inherited; entry "-m": the real
    `python -m autograder` (the real engine), from its first line."""
    env = {**os.environ, "GRADING_COUNT_FILE": str(count_file), "GRADING_ENGINE": engine, "PYTHONPATH": str(ROOT)}
    command = ["-m", "autograder"] if entry == "-m" else ["-c", DRIVER, str(HERE)]
    return subprocess.Popen(
        [sys.executable, *command, "grade", "--quiet", *args],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_grader(
    args: Sequence[str], count_file: Path, engine: str = "fake", timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run the grader to completion; fail loudly on a non-zero exit."""
    process = start_grader(args, count_file, engine)
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def stored(out_dir: Path) -> list[str]:
    """Stems with a stored result."""
    folder = out_dir / ".grading" / "results"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL whatever is left of a grader we started (its session's process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def gradings(count_file: Path) -> Counter:
    """How many gradings were started, per submission file name."""
    lines = count_file.read_text(encoding="utf-8").splitlines() if count_file.exists() else []
    return Counter(line.split(" ", 1)[1] for line in lines)


def scores(out_dir: Path) -> dict[str, dict]:
    """Per submission: status, total and per-check points, from the `<stem>.json` reports."""
    table = {}
    for path in sorted(out_dir.glob("*.json")):
        if path.name.endswith((".results.json", ".reporter.json")) or path.name == CLASS_JSON:
            continue  # not a submission's own result
        data = json.loads(path.read_text(encoding="utf-8"))
        table[data["submission"]] = {
            "status": data["status"],
            "points": data["points"],
            "checks": {c["check_id"]: c["points"] for p in data["parts"] for c in p["checks"]},
        }
    return table


def gradebook_rows(out_dir: Path) -> list[list[str]]:
    """gradebook.csv without its timing column (the only one that differs between gradings)."""
    lines = (out_dir / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
    return [line.split(",")[:-1] for line in lines]
