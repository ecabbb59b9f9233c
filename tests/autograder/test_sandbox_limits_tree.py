"""Limits for a worker's whole process tree and a whole submission: the tree memory watchdog and the deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.sandbox import BudgetSpent, Limits, Worker, WorkerFailure, treewatch
from autograder.sandbox.treewatch import TreeMemoryWatch, resident_bytes, resident_set_bytes, tree_pids

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "worker"


def _tree(count: int, mb: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(FIXTURES / "tree_of_hogs.py"), str(count), str(mb)], start_new_session=True
    )


def test_the_watchdog_kills_a_tree_whose_processes_together_exceed_the_limit():
    proc = _tree(3, 150)  # 3 x 150 MB: each process small, the tree ~450 MB
    watch = TreeMemoryWatch(proc.pid, limit_mb=300)
    try:
        assert proc.wait(timeout=60) == -9
        assert watch.tripped and watch.peak_mb > 300
    finally:
        watch.stop()
        proc.kill()


def test_the_watchdog_leaves_a_tree_under_the_limit_alone():
    proc = _tree(2, 50)
    watch = TreeMemoryWatch(proc.pid, limit_mb=1024)
    try:
        deadline = time.monotonic() + 60
        while len(tree_pids(proc.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # the children have touched their memory
        used = resident_bytes(tree_pids(proc.pid)) >> 20
        assert 100 <= used < 1024 and proc.poll() is None and not watch.tripped
    finally:
        watch.stop()
        os.killpg(proc.pid, signal.SIGKILL)  # the parent and its children (its own session)
        proc.wait(timeout=10)


def test_the_cheap_bound_lies_above_the_deciding_sum_and_spares_its_cost(monkeypatch):
    proc = _tree(2, 50)  # the children share the parent's pages after fork: RSS counts them twice
    try:
        deadline = time.monotonic() + 60
        while len(tree_pids(proc.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        pids = tree_pids(proc.pid)
        assert resident_set_bytes(pids) >= resident_bytes(pids) >= 100 << 20
        # Under the limit the watch never reads smaps_rollup; over it, it does and decides on it.
        walks: list[int] = []
        real = treewatch.resident_bytes

        def counted(found: list[int]) -> int:
            walks.append(1)
            return real(found)

        monkeypatch.setattr(treewatch, "resident_bytes", counted)
        watch = TreeMemoryWatch(proc.pid, limit_mb=1024, poll_s=0.05)
        time.sleep(0.5)
        watch.stop()
        assert not walks and not watch.tripped and proc.poll() is None and watch.peak_mb >= 100
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_a_deadline_cuts_requests_loads_and_restarts():
    with Worker(
        [("budget.py", 1, (FIXTURES / "budget.py").read_text())],
        Limits(timeout_s=60),
        {},
        deadline=time.monotonic() + 12,
    ) as worker:
        assert worker.call("answer", []) == 42
        began = time.monotonic()
        with pytest.raises(BudgetSpent, match="time budget ran out"):
            worker.call("spin", [])  # its own timeout is 60 s: the deadline cuts it
        assert time.monotonic() - began < 15
        began = time.monotonic()
        with pytest.raises(BudgetSpent):
            worker.call("answer", [])  # no restart is attempted once the budget is spent
        assert time.monotonic() - began < 0.5


def test_a_reply_over_the_cap_fails_its_request_unread_and_the_worker_recovers():
    source = "import torch\n\ndef big(mb):\n    return torch.zeros(mb << 18)\n"  # float32: mb MB
    with Worker(source, Limits(reply_mb=8), {}) as worker:
        assert worker.call("big", [4]).numel() == 4 << 18
        with pytest.raises(WorkerFailure, match=r"a reply of 20 MB is over the reply limit of 8 MB"):
            worker.call("big", [20])
        assert worker.call("big", [1]).numel() == 1 << 18  # a fresh worker took over
