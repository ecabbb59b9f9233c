"""Ctrl-C or SIGTERM mid-batch: one line on stderr, every finished result stored intact, no process left behind."""

from __future__ import annotations

import os
import signal
import time
from functools import partial
from pathlib import Path

import counting_engine
import psutil
import pytest
from resume_helpers import kill_group, run_grader, scores, start_grader, stored, wait_until
from test_batch_resume import fake_batch, real_batch

from autograder.assignment import load_assignment
from autograder.batch import expand_paths, grade_batch
from autograder.config import load_config

# Generous bounds: the shared CI machine may be several times slower than a quiet one.
STORED_WAIT_S = 300
EXIT_WAIT_S = 120
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _alive(processes: list[psutil.Process]) -> list[str]:
    """The processes that still run (a pid reused by another process does not count)."""
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{process.pid} {' '.join(process.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            continue
    return left


def interrupt_mid_batch(
    subs: Path,
    tmp_path: Path,
    engine: str,
    args: list[str],
    stored_before: int,
    reference_out: Path | None = None,
    stop: signal.Signals = signal.SIGINT,
) -> str:
    """Grade, stop it once results are stored, check the aftermath; returns the grader's stderr.

    reference_out: an uninterrupted grading of the same batch (None: graded here by the CLI).
    stop: SIGINT goes to the whole process group (a terminal's Ctrl-C); SIGTERM only to the
        grader's main process (`kill PID`, a job scheduler), which must stop its pool itself.
    """
    out = tmp_path / "out"
    if reference_out is None:
        reference_out = tmp_path / "reference"
        run_grader([str(subs), "--out", str(reference_out), *args], tmp_path / "ref.log", engine, timeout=1200)
    process = start_grader([str(subs), "--out", str(out), *args], tmp_path / "run.log", engine)
    try:
        wait_until(lambda: len(stored(out)) >= stored_before, STORED_WAIT_S, "results to be stored")
        children = _descendants(process.pid)  # pool processes and, with the real engine, sandboxes
        assert children or args[args.index("--jobs") + 1] == "1", "a parallel batch runs no process to stop"
        if stop == signal.SIGINT:
            os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole group
        else:
            os.kill(process.pid, stop)
        _, stderr = process.communicate(timeout=EXIT_WAIT_S)
    finally:
        kill_group(process)
    deadline = time.monotonic() + 30
    while _alive(children) and time.monotonic() < deadline:  # exit status is in; reaping may lag
        time.sleep(0.1)
    assert _alive(children) == []
    assert process.returncode == (EXIT_INTERRUPTED if stop == signal.SIGINT else EXIT_TERMINATED), stderr
    assert "Traceback" not in stderr
    # One line. Python's resource tracker (a process of its own, writing to the same stderr after the
    # grader has exited) warned once, in a CI run at load 3-4, of a pool semaphore it found already
    # unlinked: its two-line warnings are not the grader's and are left out here (seen 1 run in ~10).
    ours = [line for line in stderr.strip().splitlines() if not _resource_tracker_warning(line)]
    assert len(ours) == 1 and ours[0].startswith(("Interrupted", "Terminated", "중단", "종료")), stderr
    kept = stored(out)
    assert stored_before <= len(kept) < len(list(subs.iterdir()))
    assert f"Interrupted: {len(kept)} result(s) stored in {out}" in stderr
    # What was stored is intact: the same reports an uninterrupted run writes for those submissions.
    expected = scores(reference_out)
    found = scores(out)
    assert set(found) <= set(expected) and found == {name: expected[name] for name in found}
    return stderr


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "sigterm"])
@pytest.mark.parametrize("jobs", ["2", "1"])  # a pool of grading processes, or grading in the grader itself
def test_ctrl_c_or_sigterm_stops_a_batch_cleanly_fake_engine(jobs, stop, tmp_path, monkeypatch):
    subs = fake_batch(tmp_path / "subs", 10)
    # The uninterrupted grading, in this process (the fake engine's results depend on content only).
    monkeypatch.setenv("GRADING_COUNT_FILE", str(tmp_path / "ref.log"))
    monkeypatch.setenv("GRADING_FAKE_SECONDS", "0")
    reference_out = tmp_path / "reference"
    config = load_config(overrides={"feedback.language": "en", "grading.progress": False})
    part2 = load_assignment("transformer_mt")
    grade = partial(counting_engine.grade_submission, assignment=part2)
    grade_batch(expand_paths([subs]), config, None, reference_out, grade_function=grade, assignment=part2)
    monkeypatch.setenv("GRADING_FAKE_SECONDS", "1")
    interrupt_mid_batch(subs, tmp_path, "fake", ["--jobs", jobs, "--language", "en"], 2, reference_out, stop)


@pytest.mark.e2e
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_a_parallel_batch_cleanly_real_notebooks(stop, tmp_path):
    """Real notebooks: the pool processes hold sandboxed workers (forked from their zygotes, as
    root), which must be gone too."""
    subs = real_batch(tmp_path / "subs")
    interrupt_mid_batch(subs, tmp_path, "real", ["--jobs", "2", "--language", "en"], stored_before=1, stop=stop)


def _resource_tracker_warning(line: str) -> bool:
    """A line of multiprocessing's resource tracker's warning: its source location, or the call shown under it."""
    return "multiprocessing/resource_tracker.py" in line or line.strip().startswith("warnings.warn('resource_tracker")
