"""The instructor tools take nothing on trust: links and special files are not copied, forged results are refused."""

from __future__ import annotations

import csv
import json
import os
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest

from autograder import config as grader_config
from autograder.integrations import collect_submissions, merge_results
from autograder.results import CheckResult, PartResult, SubmissionResult

DEADLINE = "2026-12-01T23:59:59+09:00"
BEFORE = "2026-11-20T10:00:00+09:00"
PARTS = grader_config.load_config(None).parts
UNIT = [name for name in PARTS if name != "training"]
SIDECAR_NAMES = "{stem}.pt,checkpoint.pt"  # Part 2's checkpoint names, as the workflow passes them


def repo_with(
    path: Path, links: dict[str, str], files: dict[str, str] | None = None, folders: tuple[str, ...] = ()
) -> Path:
    """A git repository committed before the deadline holding symlinks, files and folders."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    for name, target in links.items():
        (path / name).symlink_to(target)
    for name, text in (files or {}).items():
        (path / name).write_text(text, encoding="utf-8")
    for name in folders:
        (path / name).mkdir()
        (path / name / "inside.txt").write_text("a folder named like a notebook", encoding="utf-8")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": BEFORE,
        "GIT_COMMITTER_DATE": BEFORE,
        "GIT_AUTHOR_NAME": "S",
        "GIT_AUTHOR_EMAIL": "s@example.edu",
        "GIT_COMMITTER_NAME": "S",
        "GIT_COMMITTER_EMAIL": "s@example.edu",
    }
    subprocess.run(["git", "add", "-A"], cwd=path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "work"], cwd=path, check=True, env=env)
    return path


def test_collect_skips_and_reports_every_bad_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = secrets.token_hex(16)
    monkeypatch.setenv("GH_TOKEN", "")  # local repositories need none
    monkeypatch.setenv("COLLECT_TEST_SECRET", token)  # what /proc/self/environ would hand over
    remotes = tmp_path / "remotes"
    repos = {
        "good": repo_with(remotes / "good", {}, {"hw.ipynb": '{"cells": []}', "checkpoint.pt": "weights"}),
        "environ": repo_with(remotes / "environ", {"hw.ipynb": "/proc/self/environ"}),
        "folder": repo_with(remotes / "folder", {}, folders=("hw.ipynb",)),
        "dangling": repo_with(remotes / "dangling", {"hw.ipynb": "nowhere/missing.ipynb"}),
        "zero": repo_with(remotes / "zero", {"hw.ipynb": "/dev/zero"}),
        "ckpt": repo_with(remotes / "ckpt", {"checkpoint.pt": "/proc/self/environ"}, {"hw.ipynb": "{}"}),
    }
    listing = tmp_path / "repos.txt"
    listing.write_text("\n".join(str(p) for p in repos.values()) + "\n", encoding="utf-8")
    out = tmp_path / "submissions"
    code = collect_submissions.main(
        ["--repos", str(listing), "--deadline", DEADLINE, "--out", str(out), "--sidecar-names", SIDECAR_NAMES]
    )
    assert code == 0
    with (out / "manifest.csv").open(encoding="utf-8") as handle:
        rows = {Path(row["repo"]).name: row for row in csv.DictReader(handle)}
    assert set(rows) == set(repos), "every repository has a manifest row"
    assert rows["good"]["status"] == "ok" and rows["good"]["checkpoint"] == "checkpoint.pt"
    for bad in ("environ", "folder", "dangling", "zero"):
        assert rows[bad]["status"] == "refused" and rows[bad]["file"] == "", rows[bad]
        assert ("link" in rows[bad]["detail"]) or ("folder" in rows[bad]["detail"]), rows[bad]
    assert rows["ckpt"]["status"] == "ok" and rows["ckpt"]["checkpoint"] == ""
    assert "checkpoint not copied" in rows["ckpt"]["detail"]
    copied = sorted(p.name for p in (out / "notebooks").iterdir())
    assert copied == ["ckpt.ipynb", "good.ipynb", "good.pt"] or all("__" in n for n in copied)
    for path in (out / "notebooks").iterdir():
        assert not path.is_symlink() and token not in path.read_text(encoding="utf-8", errors="replace")
        assert path.stat().st_size < 1000


def test_sidecar_names_are_file_names_with_a_suffix() -> None:
    assert collect_submissions.parse_sidecar_names(" {stem}.pt, checkpoint.pt,") == ("{stem}.pt", "checkpoint.pt")
    assert collect_submissions.parse_sidecar_names("") == ()
    for bad in ("../secret.pt", "sub/{stem}.pt", "{stem}"):
        with pytest.raises(ValueError, match="--sidecar-names"):
            collect_submissions.parse_sidecar_names(bad)


def result_for(
    stem: str,
    points: dict[str, float] | None = None,
    graded: tuple[str, ...] = tuple(UNIT),
    extra_parts: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A `<stem>.json` as the engine writes it: `graded` parts graded (points per part spread over its
    checks, full marks by default), the others skipped; `extra_parts` adds parts grader.yml lacks."""
    parts = []
    for name, part in [*PARTS.items(), *((n, PARTS["decoder"]) for n in extra_parts)]:
        share = (points or {}).get(name, part.points) / part.points
        checks = [
            CheckResult(
                check,
                name,
                float(top),
                share == 1,
                float(top) * share,
                "",
                skipped=name not in graded and name not in extra_parts,
            )
            for check, top in part.checks.items()
        ]
        parts.append(
            PartResult(name, part.title, float(part.points), sum(c.points for c in checks if not c.skipped), checks)
        )
    return SubmissionResult(f"{stem}.ipynb", "graded", parts).to_json()


def write_results(folder: Path, results: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    for name, data in results.items():
        (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_merge_validates_against_grader_yml_and_lists_every_roster_student(tmp_path: Path) -> None:
    unit = write_results(
        tmp_path / "grading-output",
        {
            "alice": result_for("alice", {"decoder": 10}),
            "bob": result_for("bob", dict.fromkeys(UNIT, 0)),
            "bob2": result_for("bob"),  # a second row for bob.ipynb
        },
    )
    forged_over_max = result_for("bob", dict.fromkeys(UNIT, 0), graded=("training",))
    forged_over_max["parts"][-1]["checks"][0]["points"] = 1000.0
    training = write_results(
        tmp_path / "training-output",
        {
            "alice": result_for("alice", graded=("training",)),  # honest: adds the training part
            "bob": result_for("bob", graded=(*UNIT, "training")),  # tries to replace graded unit parts
            "carol": forged_over_max,  # a file for nobody in the first folder
            "eve": result_for("eve", extra_parts=("bonus",)),
        },
    )
    (training / "broken.json").write_text("{not json", encoding="utf-8")
    (training / "linked.json").symlink_to(unit / "alice.json")
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(
        "repo,status,commit,commit_date,notebook,file,detail,checkpoint\n"
        "course/alice,ok,1,,hw.ipynb,notebooks/alice.ipynb,,\n"
        "course/bob,ok,1,,hw.ipynb,notebooks/bob.ipynb,,\n"
        "course/dave,no-notebook,1,,,,no .ipynb at the repository root,\n"
        "course/erin,refused,1,,,,hw.ipynb is a symbolic link (not followed),\n",
        encoding="utf-8",
    )
    out = tmp_path / "final"
    assert merge_results.main([str(unit), str(training), "--out", str(out), "--manifest", str(manifest)]) == 0
    with (out / "gradebook.csv").open(encoding="utf-8-sig") as handle:
        rows = {row["file"]: row for row in csv.DictReader(handle) if row["file"] != "points-per-question"}
    assert sorted(rows) == ["alice.ipynb", "bob.ipynb", "course__dave.ipynb", "course__erin.ipynb"]
    assert rows["alice.ipynb"]["decoder"] == "10" and rows["alice.ipynb"]["training"] == "20"
    assert rows["alice.ipynb"]["total_points_earned"] == "90"
    assert rows["bob.ipynb"]["total_points_earned"] == "20", "unit zeros stay; only training was added"
    for missing in ("course__dave.ipynb", "course__erin.ipynb"):
        assert rows[missing]["status"] == "missing" and rows[missing]["total_points_earned"] == "0"
        assert all(rows[missing][part] == "0" for part in PARTS)
    with (out / merge_results.MERGE_MANIFEST).open(encoding="utf-8") as handle:
        log = {row["source"]: row for row in csv.DictReader(handle)}
    refused = {source for source, row in log.items() if row["outcome"] == "refused"}
    assert refused == {
        "grading-output/bob2.json",
        "training-output/carol.json",
        "training-output/eve.json",
        "training-output/broken.json",
        "training-output/linked.json",
    }
    assert "unknown part 'bonus'" in log["training-output/eve.json"]["detail"]
    assert "link" in log["training-output/linked.json"]["detail"]
    assert log["manifest:course/dave"]["outcome"] == "missing"


def test_a_forged_maximum_is_refused() -> None:
    forged = SubmissionResult.from_json(result_for("mallory"))
    forged.parts[0].checks[0].max_points = 1000.0
    forged.parts[0].checks[0].points = 1000.0
    with pytest.raises(merge_results.InvalidResult, match="maximum"):
        merge_results.validate(forged, PARTS)


def test_a_missing_students_row_is_korean_explains_why_and_has_the_graded_rows_possible_points(tmp_path: Path) -> None:
    unit = write_results(tmp_path / "grading-output", {"alice": result_for("alice")})  # training not graded
    git_error = "ERROR: Repository not found. fatal: Could not read from remote repository. and the repository exists."
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(
        "repo,status,commit,commit_date,notebook,file,detail,checkpoint\n"
        "course/alice,ok,1,,hw.ipynb,notebooks/alice.ipynb,,\n"
        f'class/carol,clone-failed,,,,,"{git_error}",\n',
        encoding="utf-8",
    )
    out = tmp_path / "final"
    assert merge_results.main([str(unit), "--out", str(out), "--manifest", str(manifest)]) == 0
    with (out / "gradebook.csv").open(encoding="utf-8-sig") as handle:
        rows = {row["file"]: row for row in csv.DictReader(handle)}
    carol, alice = rows["class__carol.ipynb"], rows["alice.ipynb"]
    assert carol["status"] == "missing" and carol["possible"] == alice["possible"] == "80"
    assert carol["training"] == alice["training"] == ""  # skipped on both rows, not 0 of 20
    report = json.loads((out / "class__carol.json").read_text(encoding="utf-8"))
    reason = report["load_problems"][0]
    assert "class/carol" in reason and "저장소를 가져올 수 없었습니다" in reason, reason  # grader.yml: ko
    assert "Repository not found" in reason, "git's whole message, not only its last line"
