"""grade --regrade and report --compare: a one-check points change in a copy of grader.yml, the stored
results kept, regrade.csv listing only the changed students; late work and the LMS export through
the CLI."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from autograder import cli
from autograder.assignment import load_assignment
from autograder.batch import expand_paths, grade_batch
from autograder.config import load_config
from autograder.results_store import PREVIOUS_DIR, STORE_DIR

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HERE = Path(__file__).resolve().parent


def fake_grade(path, config, parts):
    sys.path.insert(0, str(HERE))
    from counting_engine import _fake  # noqa: PLC0415 - the helper module beside these tests

    return _fake(path, config, parts)


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setenv("GRADING_FAKE_SECONDS", "0")


def make_class(folder: Path, count: int = 8) -> Path:
    folder.mkdir(parents=True)
    for index in range(count):
        (folder / f"s{index}.ipynb").write_text(f"# submission {index}\n", encoding="utf-8")
    return folder


def changed_copy(tmp_path: Path) -> Path:
    """grader.yml with one check's points changed: mask_blocks_future 3 -> 5 (its part 10 -> 12)."""
    text = (FIXTURES / "results" / "grader.yml").read_text(encoding="utf-8")
    old_part, old_check = "    points: 10\n    checks:\n      mask_shape_and_dtype: 1\n", "mask_blocks_future: 3"
    assert old_part in text and old_check in text
    text = text.replace(old_part, old_part.replace("10", "12")).replace(old_check, "mask_blocks_future: 5")
    path = tmp_path / "grader.yml"
    path.write_text(text, encoding="utf-8")
    return path


def passed_mask(out: Path) -> set[str]:
    """Submissions whose fake grading passed the look-ahead mask part."""
    return {
        path.stem
        for path in out.glob("s*.json")
        if not path.name.endswith(".results.json")
        and json.loads(path.read_text(encoding="utf-8"))["parts"][0]["points"] > 0
    }


def test_regrade_lists_exactly_the_students_whose_points_change(tmp_path):
    subs, out = make_class(tmp_path / "subs"), tmp_path / "out"
    submissions = expand_paths([subs])
    grade_batch(
        submissions,
        load_config(FIXTURES / "results" / "grader.yml"),
        None,
        out,
        grade_function=fake_grade,
        assignment=load_assignment("transformer_mt"),
    )
    winners = passed_mask(out)
    assert 0 < len(winners) < 8  # the fake passes parts by content: some, not all

    config = load_config(changed_copy(tmp_path), {"feedback.language": "en"})
    run = grade_batch(
        submissions,
        config,
        None,
        out,
        grade_function=fake_grade,
        assignment=load_assignment("transformer_mt"),
        regrade=True,
    )

    assert sorted(run.regraded) == [f"s{i}.ipynb" for i in range(8)]
    assert (out / STORE_DIR / PREVIOUS_DIR / "s0.json").is_file()  # the old results are kept
    rows = list(csv.DictReader(io.StringIO((out / "regrade.csv").read_text(encoding="utf-8-sig"))))
    assert {row["submission"] for row in rows} == {f"{stem}.ipynb" for stem in winners}
    checks = [row for row in rows if row["level"] == "check"]
    assert {(row["part"], row["check"], row["old points"], row["new points"], row["change"]) for row in checks} == {
        ("look_ahead_mask", "mask_blocks_future", "3", "5", "2")
    }
    assert len(checks) == len(winners)


def test_a_changed_grader_yml_without_the_flag_also_keeps_and_compares(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADING_COUNT_FILE", str(tmp_path / "count.log"))
    subs, out = make_class(tmp_path / "subs"), tmp_path / "out"
    base = ["grade", str(subs), "--out", str(out), "--quiet"]
    driver = _cli_with_fake_engine
    assert driver([*base, "--config", str(FIXTURES / "results" / "grader.yml")]) == 0
    old_copy = tmp_path / "old-out"
    import shutil

    shutil.copytree(out, old_copy)  # what an instructor keeps to compare with later
    winners = passed_mask(out)
    assert driver(["grade", str(subs), "--out", str(out), "--config", str(changed_copy(tmp_path))]) == 0
    assert len((tmp_path / "count.log").read_text().splitlines()) == 16  # every submission graded twice
    stderr = capsys.readouterr().err
    assert f"재채점: 제출물 {len(winners)}개의 점수가 바뀌었습니다" in stderr  # ko, the console too
    regrade_csv = (out / "regrade.csv").read_text(encoding="utf-8-sig")
    (out / "regrade.csv").unlink()
    assert cli.main(["report", str(out), "--compare", str(old_copy)]) == 0
    assert (out / "regrade.csv").read_text(encoding="utf-8-sig") == regrade_csv
    lines = regrade_csv.splitlines()
    assert lines[0] == "제출물,구분,파트,검사,이전 점수,새 점수,변화"
    assert {line.split(",")[0] for line in lines[1:]} == {f"{stem}.ipynb" for stem in winners}
    assert len(lines) == 1 + 3 * len(winners)  # per student: total, part, check


def _cli_with_fake_engine(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    import counting_engine  # noqa: PLC0415

    previous = sys.modules.get("autograder.engine")
    sys.modules["autograder.engine"] = counting_engine
    try:
        return cli.main(argv)
    finally:
        if previous is None:
            sys.modules.pop("autograder.engine", None)
        else:
            sys.modules["autograder.engine"] = previous


def test_late_work_from_the_manifest_then_the_lms_export(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADING_COUNT_FILE", str(tmp_path / "count.log"))
    subs, out = tmp_path / "notebooks", tmp_path / "out"
    subs.mkdir()
    for name in ("alice", "bob", "dana"):
        (subs / f"{name}.ipynb").write_text(f"# {name}\n", encoding="utf-8")
    config = tmp_path / "grader.yml"
    config.write_text(
        (FIXTURES / "results" / "grader.yml").read_text(encoding="utf-8")
        + "\nlate:\n  deadline: 2026-12-01T23:59:59+09:00\n  penalty_per_unit: 0.1\n  max_penalty: 0.5\n",
        encoding="utf-8",
    )
    manifest = FIXTURES / "late" / "manifest.csv"
    args = ["grade", str(subs), "--out", str(out), "--config", str(config), "--quiet"]
    assert _cli_with_fake_engine([*args, "--submission-times", str(manifest)]) == 0
    rows = {
        row["file"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text(encoding="utf-8-sig")))
    }
    assert rows["bob.ipynb"]["time_source"] == "git-commit" and rows["alice.ipynb"]["late_penalty"] == "0"
    assert rows["dana.ipynb"]["time_source"] == "unknown"  # not in the manifest: on time, and said so
    bob = json.loads((out / ".grading" / "results" / "bob.json").read_text())["result"]["late"]
    assert (bob["units_late"], bob["penalty_fraction"]) == (2, 0.2)
    assert "제출 시각을 알 수 없어" in (out / "dana.md").read_text(encoding="utf-8")

    # A later deadline re-assesses lateness without grading again.
    count = len((tmp_path / "count.log").read_text().splitlines())
    assert (
        _cli_with_fake_engine([*args, "--submission-times", str(manifest), "--deadline", "2026-12-04T00:00:00+09:00"])
        == 0
    )
    assert len((tmp_path / "count.log").read_text().splitlines()) == count
    assert json.loads((out / ".grading" / "results" / "bob.json").read_text())["result"]["late"]["units_late"] == 0

    assert (
        cli.main(["export", str(out), "--roster", str(FIXTURES / "late" / "roster.csv"), "--canvas-column", "HW (9)"])
        == 0
    )
    canvas = list(csv.reader(io.StringIO((out / "canvas_import.csv").read_text(encoding="utf-8-sig"))))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "HW (9)"]
    assert [row[0] for row in canvas[1:]] == ["Kim, Alice", "Lee, Bob", "Park, Dana"]
    long_rows = list(csv.DictReader(io.StringIO((out / "grades_long.csv").read_text(encoding="utf-8-sig"))))
    assert all(row[5] for row in canvas[1:])  # all three graded
    assert {row["student"] for row in long_rows} == {"Kim, Alice", "Lee, Bob", "Park, Dana"}


def test_a_bad_times_file_is_a_usage_error_before_grading(tmp_path, capsys):
    subs = make_class(tmp_path / "subs", 1)
    bad = tmp_path / "times.csv"
    bad.write_text("file,commit_date\ns0.ipynb,yesterday\n", encoding="utf-8")
    argv = ["grade", str(subs), "--out", str(tmp_path / "out"), "--submission-times", str(bad), "--quiet"]
    assert _cli_with_fake_engine([*argv, "--config", str(FIXTURES / "results" / "grader.yml")]) == 2
    assert "times.csv, line 2" in capsys.readouterr().err
