"""The resumable store: digests, atomic records, reuse of current results, report rebuilding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder import cli, exit_codes
from autograder.assignment import load_assignment
from autograder.batch import expand_paths, grade_batch, rebuild_reports
from autograder.config import load_config
from autograder.results_store import ResultsStore, atomic_write_text, engine_digest, inputs_digest, sidecar_files
from autograder.submission_snapshot import read_submission

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
CONFIG = load_config(FIXTURES / "grader.yml")
PART2 = load_assignment("transformer_mt")  # the assignment the fixture grader.yml names
GRADED: list[str] = []  # file names, in grading order (in-process gradings only: jobs=1)


def fake_grade(path, config, parts):
    from counting_engine import _fake  # noqa: PLC0415 - the helper module beside these tests

    GRADED.append(Path(path).name)
    return _fake(path, config, parts)


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setenv("GRADING_FAKE_SECONDS", "0")
    GRADED.clear()


def make_submissions(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        path = folder / f"s{index}.ipynb"
        path.write_text(f"# submission {index}\n", encoding="utf-8")
        paths.append(path)
    return paths


def grade(folder: Path, out: Path, config=CONFIG, **kwargs):
    return grade_batch(expand_paths([folder]), config, None, out, grade_function=fake_grade, assignment=PART2, **kwargs)


def test_atomic_write_replaces_whole_files_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "r.json"
    atomic_write_text(target, "old")
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_inputs_digest_follows_grading_inputs_but_not_run_only_keys():
    base = inputs_digest(CONFIG, None)
    assert (
        inputs_digest(load_config(FIXTURES / "grader.yml", {"grading.jobs": 4, "grading.out_dir": "x"}), None) == base
    )
    assert inputs_digest(load_config(FIXTURES / "grader.yml", {"grading.seed": 1}), None) != base
    assert inputs_digest(CONFIG, ["decoder"]) != base
    assert len(engine_digest()) == 64


def test_the_engine_version_covers_the_folders_the_assignment_makes_importable(tmp_path):
    toolkit = load_assignment("transformer_mt").worker_paths
    assert toolkit and engine_digest(toolkit) != engine_digest()
    assert inputs_digest(CONFIG, None, toolkit) != inputs_digest(CONFIG, None)
    # a folder's files count by their place under the project and their bytes
    outside = tmp_path / "kit"
    outside.mkdir()
    (outside / "a.py").write_text("x = 1\n")
    first = engine_digest.__wrapped__((outside,))
    (outside / "a.py").write_text("x = 2\n")
    assert engine_digest.__wrapped__((outside,)) != first


def test_checkpoint_files_count_as_part_of_the_submission_in_checkpoint_mode(tmp_path):
    notebook = tmp_path / "hw.ipynb"
    notebook.write_text("{}")
    (tmp_path / "hw.pt").write_bytes(b"weights")
    config = load_config(FIXTURES / "grader.yml", {"training.enabled": True, "training.mode": "checkpoint"})
    assert sidecar_files(notebook, CONFIG, None, PART2.sidecar_names) == []
    assert sidecar_files(notebook, config, None, PART2.sidecar_names) == [tmp_path / "hw.pt"]
    assert sidecar_files(notebook, config, ["decoder"], PART2.sidecar_names) == []
    before = read_submission(notebook, sidecar_files(notebook, config, None, PART2.sidecar_names))[2]
    (tmp_path / "hw.pt").write_bytes(b"other weights")
    assert read_submission(notebook, sidecar_files(notebook, config, None, PART2.sidecar_names))[2] != before


def test_rerun_reuses_current_results_and_grades_changed_ones(tmp_path):
    paths = make_submissions(tmp_path / "subs", 4)
    first = grade(tmp_path / "subs", tmp_path / "out")
    assert first.graded == [p.name for p in paths] and first.reused == []
    again = grade(tmp_path / "subs", tmp_path / "out")
    assert again.graded == [] and len(again.reused) == 4
    assert [r.to_json() for r in again.results] == [r.to_json() for r in first.results]
    paths[2].write_text("# changed\n", encoding="utf-8")
    changed = grade(tmp_path / "subs", tmp_path / "out")
    assert changed.graded == ["s2.ipynb"]
    forced = grade(tmp_path / "subs", tmp_path / "out", regrade=True)
    assert len(forced.graded) == 4
    other_seed = load_config(FIXTURES / "grader.yml", {"grading.seed": 3})
    assert len(grade(tmp_path / "subs", tmp_path / "out", config=other_seed).graded) == 4
    assert GRADED.count("s2.ipynb") == 4 and GRADED.count("s0.ipynb") == 3


def test_each_result_is_stored_and_reported_the_moment_it_finishes(tmp_path):
    make_submissions(tmp_path / "subs", 3)
    out = tmp_path / "out"
    seen = []

    def grade_and_look(path, config, parts):
        seen.append(sorted(p.name for p in out.glob("*.json")) if out.exists() else [])
        return fake_grade(path, config, parts)

    grade_batch(expand_paths([tmp_path / "subs"]), CONFIG, None, out, grade_function=grade_and_look, assignment=PART2)
    assert seen[0] == []
    assert seen[2] == ["s0.json", "s0.results.json", "s1.json", "s1.results.json"]
    log = (out / ".grading" / "events.log").read_text().splitlines()
    assert [json.loads(line)["stem"] for line in log] == ["s0", "s1", "s2"]


def test_a_stored_grader_error_or_unreadable_record_is_graded_again(tmp_path):
    make_submissions(tmp_path / "subs", 2)
    out = tmp_path / "out"
    grade(tmp_path / "subs", out)
    record = json.loads((out / ".grading" / "results" / "s0.json").read_text())
    record["result"]["status"] = "grader-error"
    (out / ".grading" / "results" / "s0.json").write_text(json.dumps(record))
    (out / ".grading" / "results" / "s1.json").write_text("{not json")
    assert grade(tmp_path / "subs", out).graded == ["s0.ipynb", "s1.ipynb"]


def test_report_rebuilds_gradebook_and_summary_from_the_store(tmp_path, capsys):
    make_submissions(tmp_path / "subs", 3)
    out = tmp_path / "out"
    grade(tmp_path / "subs", out)
    expected = (out / "gradebook.csv").read_text(encoding="utf-8-sig")
    for name in ("gradebook.csv", "summary.md", "s1.md"):
        (out / name).unlink()
    (out / ".grading" / "results" / "s2.json").unlink()
    assert cli.main(["report", str(out)]) == exit_codes.EXIT_OK
    assert "아직 채점하지 않은 제출물(1개): s2.ipynb" in capsys.readouterr().err  # ko, the console too
    rows = (out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
    assert rows == [line for line in expected.splitlines() if not line.startswith("s2.ipynb")]
    assert (out / "summary.md").is_file() and (out / "s1.md").is_file()
    assert rebuild_reports(out, PART2) == (2, ["s2.ipynb"])


def test_a_late_notebook_graded_into_the_same_folder_keeps_every_earlier_row(tmp_path):
    make_submissions(tmp_path / "subs", 3)
    out = tmp_path / "out"
    grade(tmp_path / "subs", out)
    before = (out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
    late = tmp_path / "late" / "late.ipynb"
    late.parent.mkdir()
    late.write_text("# a late submission\n", encoding="utf-8")
    assert grade(tmp_path / "late", out).graded == ["late.ipynb"]  # only the late one is graded
    rows = (out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
    late_rows = [row for row in rows if row.startswith("late.ipynb,")]
    assert len(late_rows) == 1 and sorted(rows) == sorted([*before, *late_rows])  # earlier rows unchanged
    assert "s1.ipynb" in (out / "summary.md").read_text()
    assert rebuild_reports(out, PART2) == (1, [])  # the last batch is the late one; the gradebook keeps all four
    assert sorted((out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()) == sorted(rows)


def test_report_of_a_folder_without_a_stored_batch_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == exit_codes.EXIT_USAGE
    assert "저장된 채점 결과가 없습니다" in capsys.readouterr().err


def test_a_store_with_results_of_other_inputs_reports_them_as_not_graded(tmp_path):
    make_submissions(tmp_path / "subs", 2)
    out = tmp_path / "out"
    grade(tmp_path / "subs", out)
    store = ResultsStore(out)
    store.start_batch(CONFIG, ["decoder"], inputs_digest(CONFIG, ["decoder"]), store.batch()["submissions"])
    assert rebuild_reports(out, PART2) == (0, ["s0.ipynb", "s1.ipynb"])


def test_scratch_left_by_a_killed_batch_is_removed_on_rerun(tmp_path):
    make_submissions(tmp_path / "subs", 1)
    out = tmp_path / "out"
    (out / ".publishing-abc123").mkdir(parents=True)
    (out / ".publishing-abc123" / "s0.md").write_text("half")
    grade(tmp_path / "subs", out)
    assert not list(out.glob(".publishing-*"))
