"""`classroom50 publish`: hidden-grading results become result/v1 files per student and a gradebook."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from classroom50_helpers import CLASSROOM, DEADLINE, ROOT, SLUG, make_class

from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.i18n import use_language
from autograder.integrations.classroom50.collect import collect_all
from autograder.integrations.classroom50.publish import publish
from autograder.integrations.classroom50.schema import result_problems
from autograder.integrations.collect_submissions import deadline_moment, read_repo_list

RESULTS = ROOT / "tests" / "fixtures" / "results"
PREFIX = f"course__{CLASSROOM}-{SLUG}"


def read_gradebook(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["owner"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Collected local repositories; stored engine results (fixtures) stand in for the grading."""
    root = tmp_path_factory.mktemp("publish")
    roster = make_class(root)
    collect_all(read_repo_list(roster), deadline_moment(DEADLINE), root / "submissions", classroom=CLASSROOM, slug=SLUG)
    grading = root / "grading"
    grading.mkdir()
    shutil.copyfile(RESULTS / "full_marks.json", grading / f"{PREFIX}-alice.json")
    shutil.copyfile(RESULTS / "partial.json", grading / f"{PREFIX}-bob.json")
    (grading / f"{PREFIX}-erin.json").write_text('{"forged": true}', encoding="utf-8")  # refused, not believed
    config = load_config(RESULTS / "grader.yml")
    with use_language("ko", load_assignment("transformer_mt").messages_dir):
        publish(grading, root / "submissions" / "manifest.csv", root / "published", config, CLASSROOM, SLUG)
    return root / "published"


def test_each_submission_gets_a_valid_result_with_hidden_check_points(published: Path) -> None:
    alice = json.loads((published / f"{PREFIX}-alice" / "result.json").read_text(encoding="utf-8"))
    assert result_problems(alice) == []
    assert (alice["owner"], alice["submission"], alice["datetime"]) == (
        "alice",
        "submit/20261201T110000Z-a2",
        "2026-12-01T11:00:00Z",
    )
    assert (alice["score"], alice["max-score"]) == (80, 80)  # training was skipped: left out
    assert alice["tests"][0]["test-name"] == "Look-ahead 마스크"
    bob = json.loads((published / f"{PREFIX}-bob" / "result.json").read_text(encoding="utf-8"))
    assert result_problems(bob) == [] and (bob["score"], bob["max-score"]) == (66, 80)
    assert [t["score"] for t in bob["tests"]] == [7, 11, 20, 20, 8]


def test_release_body_is_korean_and_says_late(published: Path) -> None:
    alice = (published / f"{PREFIX}-alice" / "release-body.md").read_text(encoding="utf-8")
    bob = (published / f"{PREFIX}-bob" / "release-body.md").read_text(encoding="utf-8")
    assert alice.startswith("### 채점 결과: 80/80점") and "비공개 검사" in alice and "마감 이후" not in alice
    assert "마감 이후 제출입니다(제출 시각 2026-12-03T00:00:00Z, 마감 2026-12-01T14:59:59Z)" in bob


def test_a_tag_without_notebook_is_published_as_zero_with_the_reason(published: Path) -> None:
    carol = json.loads((published / f"{PREFIX}-carol" / "result.json").read_text(encoding="utf-8"))
    assert result_problems(carol) == [] and carol["score"] == 0 and carol["max-score"] == 80
    assert all("no-notebook" in t["message"] for t in carol["tests"])


def test_gradebook_has_every_roster_repository(published: Path) -> None:
    rows = read_gradebook(published / "gradebook.csv")
    assert set(rows) == {"alice", "bob", "carol", "dave", "erin"}
    assert (rows["alice"]["score"], rows["alice"]["late"], rows["alice"]["look_ahead_mask"]) == ("80", "no", "10")
    assert (rows["bob"]["late"], rows["bob"]["grading"], rows["bob"]["score"]) == ("yes", "graded", "66")
    assert rows["bob"]["late_tags"] == "" and rows["alice"]["late_tags"].startswith("submit/20261202")
    assert (rows["dave"]["collection"], rows["dave"]["grading"], rows["dave"]["result_file"]) == (
        "clone-failed",
        "missing",
        "",
    )
    assert (rows["erin"]["collection"], rows["erin"]["result_file"]) == ("no-submission", "")
    assert not (published / f"{PREFIX}-erin").exists()


def test_a_student_without_submission_is_zero_out_of_the_assignments_points(published: Path) -> None:
    """An LMS import must count a missing submission as 0 of the whole, not as 0 of 0 (no weight)."""
    rows = read_gradebook(published / "gradebook.csv")
    for owner in ("dave", "erin"):  # a deleted repository; a repository without a submit/ tag
        assert (rows[owner]["score"], rows[owner]["max_score"]) == ("0", rows["alice"]["max_score"]) == ("0", "80")


@pytest.mark.e2e
def test_collect_grade_publish_on_local_repositories(tmp_path: Path) -> None:
    """The documented chain, each step a command: collect, the engine's batch grading, publish."""
    roster = make_class(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", *args], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout + done.stderr

    c50 = "autograder.integrations.classroom50"
    run(c50, "collect", "--repos", str(roster), "--deadline", DEADLINE, "--classroom", CLASSROOM, "--slug", SLUG)
    assert "제출물 2개를 채점했습니다" in run("autograder", "grade", "submissions/notebooks", "--out", "grading-output")
    again = run("autograder", "grade", "submissions/notebooks", "--out", "grading-output")  # resumes: all reused
    assert "제출물 0개를 채점했습니다(저장된 결과 2개는 그대로 유효해" in again  # ko, the console too
    run(
        c50,
        "publish",
        "grading-output",
        "--manifest",
        "submissions/manifest.csv",
        "--out",
        "published",
        "--classroom",
        CLASSROOM,
        "--slug",
        SLUG,
    )
    rows = read_gradebook(tmp_path / "published" / "gradebook.csv")
    engine = json.loads((tmp_path / "grading-output" / f"{PREFIX}-alice.json").read_text(encoding="utf-8"))
    alice = json.loads((tmp_path / "published" / f"{PREFIX}-alice" / "result.json").read_text(encoding="utf-8"))
    assert result_problems(alice) == [] and alice["score"] == int(engine["points"]) == 80
    assert rows["bob"]["late"] == "yes" and rows["bob"]["score"] == "80"
    assert rows["carol"]["collection"] == "no-notebook" and rows["carol"]["score"] == "0"


def test_file_names_in_the_lead_are_escaped_and_batch_files_are_not_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A collector detail names the student's files: it must not become a heading or HTML in the
    release body. class.json (the class view `grade` writes beside the results) is not a result."""
    grading = tmp_path / "grading"
    grading.mkdir()
    (grading / "class.json").write_text(json.dumps({"students": []}), encoding="utf-8")
    hostile = "a.ipynb, 만점.ipynb\n### 만점입니다 <img src=x onerror=alert(1)>.ipynb"
    row = {"repo": f"course/{CLASSROOM}-{SLUG}-mallory", "owner": "mallory", "tag": "submit/20261201T010000Z-m1"}
    row.update({"status": "several-notebooks", "detail": hostile, "file": "", "commit": "abc", "late": "no"})
    row["submitted_at"] = "2026-12-01T01:00:00Z"
    manifest = tmp_path / "manifest.csv"
    with manifest.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    with use_language("ko", load_assignment("transformer_mt").messages_dir):
        publish(grading, manifest, tmp_path / "out", load_config(RESULTS / "grader.yml"), CLASSROOM, SLUG)
    body = (tmp_path / "out" / f"{PREFIX}-mallory" / "release-body.md").read_text(encoding="utf-8")
    lead = body.split("\n| ")[0]  # the heading and the lead paragraphs, before the table
    assert "만점입니다" in lead and "<img" not in lead
    assert [line for line in lead.splitlines() if line.startswith("#")] == [body.splitlines()[0]]
    assert "\n### 만점입니다 <img" in body.split("<details>")[1]  # the part messages quote it inside a code fence
    assert "class.json" not in capsys.readouterr().out
