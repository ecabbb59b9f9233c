"""Batch grading: path expansion, unique names, parallel processes, errors that lose nothing."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from autograder.batch import SubmissionPathError, expand_paths, grade_all
from autograder.config import GraderConfig, load_config
from autograder.grading import Submission, grader_error_result
from autograder.reports.files import SUBMISSION_FILE_KINDS, check_stems
from autograder.results import STATUS_ERROR, STATUS_GRADED, CheckResult, PartResult, SubmissionResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
CONFIG = load_config(FIXTURES / "grader.yml")


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# submission\n", encoding="utf-8")
    return path


# Fake engines: module-level so that worker processes can unpickle them by name.


def fake_grade(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    """Full marks on every selected part; the file's text decides special behaviour."""
    text = Path(path).read_text(encoding="utf-8")
    if "raise" in text:
        raise ValueError(f"boom in {Path(path).name}")
    if "crash" in text:
        os._exit(3)
    if "sleep" in text:
        time.sleep(float(text.split()[-1]))
    results = []
    for name, part in config.parts.items():
        skipped = parts is not None and name not in parts
        checks = [
            CheckResult(check, name, points, not skipped, 0 if skipped else points, skipped=skipped)
            for check, points in part.checks.items()
        ]
        results.append(PartResult(name, part.title, part.points, sum(c.points for c in checks), checks))
    return SubmissionResult(f"engine-name-{Path(path).name}", STATUS_GRADED, results, notes=[f"parts={parts}"])


def returns_a_dict(path: Path, config: GraderConfig, parts: list[str] | None) -> dict:
    return {"score": 1}


# expand_paths


def test_folder_gives_its_notebooks_and_scripts_sorted_without_hidden_files(tmp_path):
    for name in [
        "b.ipynb",
        "a.py",
        "notes.txt",
        ".hidden.py",
        "nested/c.ipynb",
        ".ipynb_checkpoints/a-checkpoint.ipynb",
    ]:
        touch(tmp_path / name)
    assert [s.label for s in expand_paths([tmp_path])] == ["a.py", "b.ipynb"]
    recursive = expand_paths([tmp_path], recursive=True)
    assert [s.label for s in recursive] == ["a.py", "b.ipynb", "nested/c.ipynb"]
    assert [s.stem for s in recursive] == ["a", "b", "nested__c"]


def test_paths_keep_their_input_order_and_duplicates_are_graded_once(tmp_path):
    folder = tmp_path / "subs"
    touch(folder / "b.py"), touch(folder / "a.py")
    single = touch(tmp_path / "z.ipynb")
    submissions = expand_paths([single, folder, folder / "a.py"])
    assert [s.label for s in submissions] == ["z.ipynb", "a.py", "b.py"]
    assert submissions[0] == Submission(single, "z.ipynb", "z")


def test_an_explicit_file_is_accepted_whatever_its_suffix(tmp_path):
    assert [s.label for s in expand_paths([touch(tmp_path / "essay.txt")])] == ["essay.txt"]


def test_clashing_names_fall_back_to_the_paths_as_given(tmp_path):
    first, second = touch(tmp_path / "x" / "hw.ipynb"), touch(tmp_path / "y" / "hw.ipynb")
    submissions = expand_paths([first, second])
    assert [s.label for s in submissions] == [first.as_posix(), second.as_posix()]
    assert len({s.stem for s in submissions}) == 2
    assert all(s.stem.endswith("hw") for s in submissions)


def test_same_stem_with_different_suffixes_and_reserved_stems_stay_apart(tmp_path):
    for name in ["a.py", "a.ipynb", "summary.ipynb"]:
        touch(tmp_path / name)
    assert [s.stem for s in expand_paths([tmp_path])] == ["a_ipynb", "a_py", "summary_ipynb"]


def test_no_two_submissions_write_the_same_report_file(tmp_path):
    # alice.results.ipynb must not write alice.results.json (alice.ipynb's Gradescope file), nor
    # alice.feedback.ipynb alice.feedback.md; Alice/alice are one file on macOS and Windows.
    names = [
        "alice.ipynb",
        "alice.results.ipynb",
        "alice.feedback.ipynb",
        "Alice.py",
        "gradebook.ipynb",
        "alice.results.results.ipynb",
    ]
    for name in names:
        touch(tmp_path / name)
    stems = [s.stem for s in expand_paths([tmp_path])]
    files = [f"{stem}{kind}".casefold() for stem in stems for kind in SUBMISSION_FILE_KINDS]
    files += ["summary.md", "gradebook.csv"]
    assert len(files) == len(set(files)), stems
    check_stems(stems)  # the report writer's own guard agrees
    with pytest.raises(ValueError, match="clash"):
        check_stems(["alice", "alice.results"])


def test_missing_path_and_empty_folder_are_usage_errors(tmp_path):
    with pytest.raises(SubmissionPathError, match="no such file or folder"):
        expand_paths([tmp_path / "missing.ipynb"])
    touch(tmp_path / "deeper" / "a.py")
    with pytest.raises(SubmissionPathError, match="--recursive"):
        expand_paths([tmp_path])


# grade_all


def test_grades_in_order_with_labels_timing_config_and_parts(tmp_path):
    submissions = expand_paths([touch(tmp_path / "b.py"), touch(tmp_path / "a.py")])
    results = grade_all(submissions, CONFIG, parts=["decoder"], grade_function=fake_grade)
    assert [r.submission for r in results] == ["b.py", "a.py"]
    assert all(r.grading_seconds > 0 for r in results)
    assert results[0].notes == ["parts=['decoder']"]
    assert results[0].points == 20


def test_an_exception_becomes_a_grader_error_with_zeros_and_the_rest_is_graded(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("raise", encoding="utf-8")
    results = grade_all(expand_paths([bad, touch(tmp_path / "good.py")]), CONFIG, grade_function=fake_grade)
    error, good = results
    assert (error.submission, error.status, good.status) == ("bad.py", STATUS_ERROR, STATUS_GRADED)
    graded = [p for p in error.parts if not p.checks]
    assert [p.part for p in graded] == list(CONFIG.parts)[:-1]
    assert all(p.points == 0 and p.max_points > 0 for p in graded)
    training = error.parts[-1]
    assert training.points == 0 and all(c.skipped for c in training.checks)
    assert "ValueError: boom in bad.py" in error.notes[0]
    assert "Traceback" in error.extras["traceback"] and "Traceback" not in error.notes[0]


def test_a_wrong_return_type_is_a_grader_error(tmp_path):
    (result,) = grade_all(expand_paths([touch(tmp_path / "a.py")]), CONFIG, grade_function=returns_a_dict)  # type: ignore[arg-type]  # wrong on purpose
    assert result.status == STATUS_ERROR
    assert "TypeError" in result.notes[0]


def test_error_result_skips_parts_that_were_not_selected():
    result = grader_error_result("x.py", CONFIG, ["decoder"], "it broke")
    graded = [p.part for p in result.parts if not p.checks]
    assert graded == ["decoder"]
    assert "(it broke)" in result.notes[0]


def test_parallel_workers_return_results_in_input_order(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("sleep 0.5", encoding="utf-8")
    submissions = expand_paths([slow, touch(tmp_path / "fast1.py"), touch(tmp_path / "fast2.py")])
    results = grade_all(submissions, CONFIG, jobs=2, grade_function=fake_grade)
    assert [r.submission for r in results] == ["slow.py", "fast1.py", "fast2.py"]
    assert [r.status for r in results] == [STATUS_GRADED] * 3
    assert results[0].grading_seconds >= 0.5


def test_a_dying_worker_process_costs_only_its_own_submission(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("crash", encoding="utf-8")
    names = [touch(tmp_path / f"ok{i}.py") for i in range(3)]
    results = grade_all(expand_paths([names[0], crash, *names[1:]]), CONFIG, jobs=2, grade_function=fake_grade)
    assert [r.submission for r in results] == ["ok0.py", "crash.py", "ok1.py", "ok2.py"]
    assert [r.status for r in results] == [STATUS_GRADED, STATUS_ERROR, STATUS_GRADED, STATUS_GRADED]
    assert "the grading process died" in results[1].notes[0]


def test_progress_bar_goes_to_stderr_only_when_asked(tmp_path, capsys):
    submissions = expand_paths([touch(tmp_path / "a.py"), touch(tmp_path / "b.py")])
    grade_all(submissions, CONFIG, grade_function=fake_grade, progress=False)
    assert capsys.readouterr() == ("", "")
    grade_all(submissions, CONFIG, grade_function=fake_grade, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "[1/2] a.py" in err and "[2/2] b.py" in err  # not a terminal: one line each
