"""`classroom50 collect` on local bare repositories with submit/* tags."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from classroom50_helpers import CLASSROOM, DEADLINE, EXAMPLES, SLUG, make_class

from autograder.integrations.classroom50.__main__ import main
from autograder.integrations.classroom50.collect import owner_of


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("class")
    roster = make_class(root)
    out = root / "submissions"
    stale = out / "notebooks" / f"course__{CLASSROOM}-{SLUG}-carol.ipynb"  # an earlier collection's copy
    stale.parent.mkdir(parents=True)
    stale.write_text("{}", encoding="utf-8")
    argv = ["collect", "--repos", str(roster), "--deadline", DEADLINE, "--out", str(out)]
    assert main([*argv, "--classroom", CLASSROOM, "--slug", SLUG]) == 0
    with (out / "manifest.csv").open(encoding="utf-8", newline="") as handle:
        rows = {row["owner"] or row["repo"]: row for row in csv.DictReader(handle)}
    return out, rows


def test_latest_submission_before_the_deadline_is_taken_and_later_ones_listed(collected) -> None:
    out, rows = collected
    alice = rows["alice"]
    assert (alice["status"], alice["tag"], alice["late"]) == ("ok", "submit/20261201T110000Z-a2", "no")
    assert alice["submitted_at"] == "2026-12-01T11:00:00Z" and alice["deadline"] == "2026-12-01T14:59:59Z"
    assert alice["late_tags"] == "submit/20261202T000000Z-a3@2026-12-02T00:00:00Z"
    assert (out / alice["file"]).read_bytes() == (EXAMPLES / "correct_original_format.ipynb").read_bytes()


def test_only_late_submission_is_collected_and_flagged_late(collected) -> None:
    out, rows = collected
    bob = rows["bob"]
    assert (bob["status"], bob["tag"], bob["late"], bob["submitted_at"]) == (
        "ok",
        "submit/20261203T000000Z-b1",
        "yes",
        "2026-12-03T00:00:00Z",
    )
    assert (out / bob["file"]).is_file()


def test_a_tag_whose_commit_lacks_the_notebook_copies_nothing(collected) -> None:
    out, rows = collected
    carol = rows["carol"]
    assert (carol["status"], carol["tag"], carol["file"]) == ("no-notebook", "submit/20261201T020000Z-c2", "")
    assert not list((out / "notebooks").glob("*carol*"))  # nor does an earlier collection's copy stay


def test_deleted_repository_and_no_submission_are_rows_too(collected) -> None:
    _, rows = collected
    assert rows["dave"]["status"] == "clone-failed" and rows["dave"]["detail"]
    assert (rows["erin"]["status"], rows["erin"]["tag"], rows["erin"]["detail"]) == (
        "no-submission",
        "",
        "no submit/* tag",
    )
    assert len(rows) == 5


def test_owner_comes_from_classroom50_repository_names() -> None:
    assert owner_of("course/tf2026-transformer-mt-Alice", "tf2026", "transformer-mt") == "Alice"
    assert owner_of("https://github.com/alice/homework.git", "tf2026", "transformer-mt") == "alice"
    assert owner_of("course/tf2026-transformer-mt-bob") == "course"


def test_a_deadline_without_time_zone_is_refused(tmp_path: Path) -> None:
    roster = tmp_path / "repos.txt"
    roster.write_text("course/repo\n", encoding="utf-8")
    assert main(["collect", "--repos", str(roster), "--deadline", "2026-12-01T23:59:59", "--out", str(tmp_path)]) == 2
