"""The bytes hashed are the bytes graded: one read per file, a private copy graded, attribution as the engine's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assignments.transformer_mt.checkpoint_file import CheckpointRefused, find_checkpoint
from autograder.assignment import load_assignment
from autograder.batch import expand_paths, grade_batch
from autograder.config import GraderConfig, load_config
from autograder.results import STATUS_GRADED, CheckResult, PartResult, SubmissionResult
from autograder.results_store import ResultsStore, sidecar_files
from autograder.submission_snapshot import SnapshotFolder, read_submission, take

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
CONFIG = load_config(FIXTURES / "grader.yml")
CHECKPOINT_MODE = load_config(FIXTURES / "grader.yml", {"training.enabled": True, "training.mode": "checkpoint"})
PART2 = load_assignment("transformer_mt")  # the assignment the fixture grader.yml names
TEMPLATE, SOLUTION = "# the template, nothing done\n", "# a solution\n"


def points_for_content(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    """Full marks when the graded file holds SOLUTION, none otherwise."""
    earned = Path(path).read_text(encoding="utf-8") == SOLUTION
    results = []
    for name, part in config.parts.items():
        checks = [CheckResult(c, name, p, earned, p if earned else 0) for c, p in part.checks.items()]
        results.append(PartResult(name, part.title, part.points, sum(c.points for c in checks), checks))
    return SubmissionResult(Path(path).name, STATUS_GRADED, results)


def test_a_file_swapped_during_the_batch_and_back_keeps_no_grade_it_never_earned(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.ipynb").write_text(TEMPLATE, encoding="utf-8")
    victim = subs / "b.ipynb"
    victim.write_text(TEMPLATE, encoding="utf-8")
    graded_paths = []

    def grade_and_swap(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
        graded_paths.append(Path(path))
        if Path(path).name == "a.ipynb":  # while a is graded, b becomes a solution
            victim.write_text(SOLUTION, encoding="utf-8")
        return points_for_content(path, config, parts)

    out = tmp_path / "out"
    run = grade_batch(expand_paths([subs]), CONFIG, None, out, grade_function=grade_and_swap, assignment=PART2)
    assert [r.points for r in run.results] == [0, 0]  # b was graded as hashed: the template
    assert all(subs not in p.parents for p in graded_paths)  # private copies, not the folder
    victim.write_text(TEMPLATE, encoding="utf-8")  # and back
    again = grade_batch(expand_paths([subs]), CONFIG, None, out, grade_function=points_for_content, assignment=PART2)
    assert again.reused == ["a.ipynb", "b.ipynb"] and [r.points for r in again.results] == [0, 0]
    record = ResultsStore(out).load("b")
    assert record is not None and record.submission_sha256 == read_submission(victim, [])[2]


def test_snapshots_are_private_and_removed_after_the_batch_also_when_it_fails(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.ipynb").write_text(TEMPLATE, encoding="utf-8")
    seen: list[Path] = []

    def look_then_fail(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
        seen.append(Path(path).parent.parent)
        assert os.stat(Path(path).parent.parent).st_mode & 0o077 == 0  # the batch's folder: 0700
        assert os.stat(Path(path).parent).st_mode & 0o077 == 0
        raise ValueError("engine bug")

    run = grade_batch(
        expand_paths([subs]), CONFIG, None, tmp_path / "out", grade_function=look_then_fail, assignment=PART2
    )
    assert run.results[0].status == "grader-error"
    assert seen and not seen[0].exists()


def test_a_shared_checkpoint_belongs_to_nobody_and_is_not_copied(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    for name in ("alice", "bob"):
        (shared / f"{name}.ipynb").write_text(TEMPLATE, encoding="utf-8")
    (shared / "checkpoint.pt").write_bytes(b"alice's weights")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "carol.ipynb").write_text(TEMPLATE, encoding="utf-8")
    (alone / "checkpoint.pt").write_bytes(b"carol's weights")
    assert sidecar_files(shared / "alice.ipynb", CHECKPOINT_MODE, None, PART2.sidecar_names) == []
    assert sidecar_files(alone / "carol.ipynb", CHECKPOINT_MODE, None, PART2.sidecar_names) == [alone / "checkpoint.pt"]
    with SnapshotFolder() as folder:
        alice = folder.take(
            shared / "alice.ipynb", sidecar_files(shared / "alice.ipynb", CHECKPOINT_MODE, None, PART2.sidecar_names)
        )
        carol = folder.take(
            alone / "carol.ipynb", sidecar_files(alone / "carol.ipynb", CHECKPOINT_MODE, None, PART2.sidecar_names)
        )
        assert sorted(p.name for p in alice.path.parent.iterdir()) == ["alice.ipynb"]
        assert (carol.path.parent / "checkpoint.pt").read_bytes() == b"carol's weights"


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_linked_checkpoint_is_refused_in_the_copy_as_in_the_original(tmp_path: Path, kind: str) -> None:
    secret = tmp_path / "grader-secret.pt"
    secret.write_bytes(b"not the student's")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "hw.ipynb").write_text(TEMPLATE, encoding="utf-8")
    (os.symlink if kind == "symlink" else os.link)(secret, sub / "hw.pt")
    patterns = ["{stem}.pt"]
    with pytest.raises(CheckpointRefused) as original:
        find_checkpoint(sub / "hw.ipynb", patterns, 10)
    snapshot = take(
        sub / "hw.ipynb", sidecar_files(sub / "hw.ipynb", CHECKPOINT_MODE, None, PART2.sidecar_names), tmp_path / "copy"
    )
    with pytest.raises(CheckpointRefused) as copied:
        find_checkpoint(snapshot.path, patterns, 10)
    assert str(copied.value) == str(original.value)
    assert b"not the student's" not in b"".join(p.read_bytes() for p in (tmp_path / "copy").iterdir() if p.is_file())
    assert read_submission(sub / "hw.ipynb", [sub / "hw.pt"])[2] == snapshot.sha256


class NamedExecutor:
    """The local executor under another name (what a Ray batch records)."""

    name = "ray"

    def prepare(self, config: GraderConfig) -> GraderConfig:
        return config

    def run(self, submissions, config, parts, grade_function, on_result) -> None:
        from autograder.grading import grade_one

        for index, submission in enumerate(submissions):
            on_result(index, grade_one(grade_function, submission, config, parts))


def test_the_store_records_the_executor_and_another_executor_grades_again(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.ipynb").write_text(TEMPLATE, encoding="utf-8")
    out = tmp_path / "out"
    grade_batch(
        expand_paths([subs]),
        CONFIG,
        None,
        out,
        executor=NamedExecutor(),
        grade_function=points_for_content,
        assignment=PART2,
    )
    record = ResultsStore(out).load("a")
    assert record is not None and record.executor == "ray"
    local = grade_batch(expand_paths([subs]), CONFIG, None, out, grade_function=points_for_content, assignment=PART2)
    assert local.graded == ["a.ipynb"]
    assert grade_batch(
        expand_paths([subs]), CONFIG, None, out, grade_function=points_for_content, assignment=PART2
    ).reused == ["a.ipynb"]
