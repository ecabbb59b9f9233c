"""Kill the grader (or one of its pool workers) with SIGKILL mid-batch, rerun, compare with an
uninterrupted run: same rows and scores, none missing, nothing stored graded twice."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import psutil
import pytest
from resume_helpers import gradebook_rows, gradings, kill_group, run_grader, scores, start_grader, stored, wait_until

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "soundness" / "corpus"
FIXTURE_CONFIG = str(ROOT / "tests" / "fixtures" / "results" / "grader.yml")
# Cheap real notebooks: unit parts only, one of them, so a grading is a worker start and a few checks.
REAL_NOTEBOOKS = [
    "alt_mask_bool",
    "mask_transposed",
    "mask_upper_triangle",
    "alt_mask_triu_complement",
    "mask_padding_ignored",
    "mask_diagonal_plus_one",
]


def fake_batch(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True)
    for index in range(count):
        (folder / f"s{index:02d}.ipynb").write_text(f"# submission {index}\n", encoding="utf-8")
    return folder


def real_batch(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in REAL_NOTEBOOKS:
        shutil.copy(CORPUS / f"{name}.ipynb", folder / f"{name}.ipynb")
    return folder


def kill_grader_and_resume(
    subs: Path, tmp_path: Path, args: list[str], engine: str, stored_before_kill: int, timeout: float
) -> None:
    """The whole scenario; asserts as it goes."""
    count = len(list(subs.iterdir()))
    reference_out, out, log = tmp_path / "reference", tmp_path / "out", tmp_path / "gradings.log"
    run_grader([str(subs), "--out", str(reference_out), *args], tmp_path / "ref.log", engine, timeout)

    process = start_grader([str(subs), "--out", str(out), *args], log, engine)
    try:
        wait_until(lambda: len(stored(out)) >= stored_before_kill, timeout, "results to be stored")
        os.kill(process.pid, signal.SIGKILL)  # the grader itself, mid-batch
        process.wait(timeout=30)
    finally:
        kill_group(process)  # its orphaned pool and sandbox workers
    done_before = stored(out)
    assert stored_before_kill <= len(done_before) < count
    started_before = sum(gradings(log).values())

    run_grader([str(subs), "--out", str(out), *args], log, engine, timeout)
    counted = gradings(log)
    assert sorted(counted) == sorted(p.name for p in subs.iterdir())  # none missing
    for stem in done_before:  # stored: never again
        assert counted[f"{stem}.ipynb"] == 1, stem
    # Only gradings cut off by the kill (started, not stored) ran twice.
    assert sum(counted.values()) == count + (started_before - len(done_before))
    print(
        f"submissions {count}, stored before the kill {len(done_before)}, gradings started "
        f"{started_before} before and {sum(counted.values()) - started_before} after the kill"
    )
    assert scores(out) == scores(reference_out)
    assert gradebook_rows(out) == gradebook_rows(reference_out)
    assert len(stored(out)) == count


def test_killed_grader_resumes_without_losing_or_regrading_fake_engine(tmp_path):
    subs = fake_batch(tmp_path / "subs", 10)
    kill_grader_and_resume(
        subs, tmp_path, ["--config", FIXTURE_CONFIG, "--jobs", "2"], "fake", stored_before_kill=3, timeout=120
    )


@pytest.mark.slow
@pytest.mark.timeout(1200)  # three batches of real gradings; minutes on a loaded 2-core machine
def test_killed_grader_resumes_without_losing_or_regrading_real_notebooks(tmp_path):
    subs = real_batch(tmp_path / "subs")
    kill_grader_and_resume(
        subs, tmp_path, ["--jobs", "2", "--parts", "look_ahead_mask"], "real", stored_before_kill=2, timeout=900
    )


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_killed_pool_worker_costs_no_submission_real_notebooks(tmp_path):
    subs = real_batch(tmp_path / "subs")
    args = ["--jobs", "2", "--parts", "look_ahead_mask"]
    reference_out, out, log = tmp_path / "reference", tmp_path / "out", tmp_path / "gradings.log"
    run_grader([str(subs), "--out", str(reference_out), *args], tmp_path / "ref.log", "real", 900)

    process = start_grader([str(subs), "--out", str(out), *args], log, "real")
    try:
        wait_until(lambda: len(stored(out)) >= 2, 900, "results to be stored")
        # A pool worker: a direct child of the grader started by multiprocessing's spawn (not its
        # resource tracker).
        workers = [
            child for child in psutil.Process(process.pid).children() if "spawn_main" in " ".join(child.cmdline())
        ]
        assert workers, "no pool worker found"
        workers[0].send_signal(signal.SIGKILL)
        _stdout, stderr = process.communicate(timeout=900)
        assert process.returncode == 0, stderr
    finally:
        kill_group(process)
    counted, count = gradings(log), len(REAL_NOTEBOOKS)
    assert sorted(counted) == sorted(p.name for p in subs.iterdir())
    # The gradings the dead worker (and the pool it broke) had in flight ran again, nothing else.
    print(f"submissions {count}, gradings started {sum(counted.values())}: {dict(counted)}")
    assert count < sum(counted.values()) <= count + 2
    assert scores(out) == scores(reference_out)
    assert gradebook_rows(out) == gradebook_rows(reference_out)
    # Rerunning grades nothing: every result was stored by the first run.
    run_grader([str(subs), "--out", str(out), *args], log, "real", 900)
    assert gradings(log) == counted
