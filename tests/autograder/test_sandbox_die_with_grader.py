"""A worker's launcher dies with the grader however the grader ends (SIGKILL included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from autograder.sandbox.process import DIE_WITH_GRADER, die_with_grader

# A stand-in grader (no imports: it starts in milliseconds): starts `sleep` under the helper as
# die_with_grader does, prints its pid, waits.
GRADER = """
import os, subprocess, sys, time
argv = [sys.executable, "-I", "-S", "-c", sys.argv[1], str(os.getpid()), "sleep", "120"]
child = subprocess.Popen(argv, start_new_session=True)
print(child.pid, flush=True)
time.sleep(120)
"""


def test_the_helper_wraps_the_launcher_in_place() -> None:
    argv = die_with_grader(["bwrap", "--", "python"])
    assert argv == [sys.executable, "-I", "-S", "-c", DIE_WITH_GRADER, str(os.getpid()), "bwrap", "--", "python"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_the_launcher_is_killed_when_the_grader_is() -> None:
    grader = subprocess.Popen([sys.executable, "-I", "-c", GRADER, DIE_WITH_GRADER], stdout=subprocess.PIPE, text=True)
    assert grader.stdout is not None
    launcher = int(grader.stdout.readline())
    deadline = time.monotonic() + 60  # the helper execs `sleep` (same pid) within this, even under load
    while Path(f"/proc/{launcher}/comm").read_text().strip() != "sleep" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(launcher)
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait(timeout=30)
    deadline = time.monotonic() + 30
    while _alive(launcher) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(launcher)
    if alive:
        os.kill(launcher, signal.SIGKILL)
    assert not alive, "the launcher outlived the grader"
