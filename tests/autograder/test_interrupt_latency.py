"""Ctrl-C answers at once: the line and exit code within ANSWER_LIMIT_S, whenever it comes; the pool
processes still unwinding finish on their own and none is left behind."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest
from resume_helpers import gradings, kill_group, start_grader, stored, wait_until
from test_batch_resume import fake_batch

ANSWER_LIMIT_S = 2.0  # from the signal to the exit status, on the shared CI machine too
GONE_WAIT_S = 60


def _interrupt(process, out: Path) -> tuple[float, str]:
    """SIGINT to the group, as a terminal's Ctrl-C; returns (seconds until the exit status, stderr)."""
    children = psutil.Process(process.pid).children(recursive=True)
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=120)  # the exit status: what a shell waits for
    took = time.monotonic() - sent
    _, stderr = process.communicate(timeout=120)  # the pipes close when the unwinding pool processes end
    deadline = time.monotonic() + GONE_WAIT_S  # the unwinding ones end by themselves, later
    while any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [c.pid for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    return took, stderr


@pytest.mark.parametrize("moment", ["start_up", "mid_check", "slow_unwind"])
def test_ctrl_c_answers_within_two_seconds_whenever_it_comes(moment, tmp_path, monkeypatch):
    """start_up: the pool is being spawned; mid_check: every pool process is grading; slow_unwind:
    the gradings take 20 s to unwind after the stop (closing sandboxes on a loaded machine), which
    the answer must not wait for (it waited up to STOP_GRACE_S = 30 s before)."""
    subs = fake_batch(tmp_path / "subs", 8)
    out = tmp_path / "out"
    monkeypatch.setenv("GRADING_FAKE_SECONDS", "0.2" if moment == "start_up" else "6")
    monkeypatch.setenv("GRADING_FAKE_UNWIND_SECONDS", "20" if moment == "slow_unwind" else "0")
    args = [str(subs), "--out", str(out), "--jobs", "2", "--language", "en"]
    if moment == "start_up":  # `python -m autograder` itself, still loading (pydantic, torch)
        process = start_grader(args, tmp_path / "count.log", entry="-m")
    else:
        process = start_grader(args, tmp_path / "count.log")
    try:
        if moment == "start_up":
            time.sleep(0.5)
        else:
            wait_until(lambda: len(gradings(tmp_path / "count.log")) >= 2, 300, "two gradings to start")
            time.sleep(0.5)
        took, stderr = _interrupt(process, out)
    finally:
        kill_group(process)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] in ("Interrupted.", "중단됨.") or "Interrupted: " in stderr, stderr
    assert "Traceback" not in stderr and "leaked" not in stderr  # nor the resource tracker's warning
    assert took < ANSWER_LIMIT_S, f"{moment}: answered after {took:.2f} s"
    assert len(stored(out)) < 8
