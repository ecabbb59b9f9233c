"""The instructors' batch workflow, step by step, with local git repositories standing in for GitHub."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_tools import EXAMPLE_NAMES, INSTRUCTOR_WORKFLOW, ROOT, find_step, load_workflow, run_step

from autograder.integrations.collect_submissions import GIT_DATE, deadline_moment, safe_name
from autograder.reports.submission_json import read_submission_json, submission_json

DEADLINE = "2026-12-01T23:59:59+09:00"
BEFORE, AFTER = "2026-11-20T10:00:00+09:00", "2026-12-02T09:00:00+09:00"
FIXTURES = ROOT / "tests" / "fixtures" / "integrations"


def commit(repo: Path, when: str, files: dict[str, str], message: str) -> str:
    """Write files and commit them with author and committer date `when`."""
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_AUTHOR_NAME": "Student",
        "GIT_AUTHOR_EMAIL": "s@example.edu",
        "GIT_COMMITTER_NAME": "Student",
        "GIT_COMMITTER_EMAIL": "s@example.edu",
    }
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo, check=True, env=env)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, env=env, capture_output=True, text=True
    ).stdout.strip()


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    return path


@pytest.fixture
def classroom(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Five student repositories (local paths) and what their collection should find."""
    remotes = tmp_path / "remotes"
    alice = new_repo(remotes / "course" / "hw-alice")
    on_time = commit(alice, BEFORE, {"hw.ipynb": "on time", "checkpoint.pt": "weights on time"}, "work")
    commit(alice, AFTER, {"hw.ipynb": "late edit", "checkpoint.pt": "late weights"}, "after the deadline")
    bob = new_repo(remotes / "course" / "hw-bob")
    commit(bob, AFTER, {"hw.ipynb": "late"}, "late start")
    carol = new_repo(remotes / "course" / "hw-carol")
    commit(carol, BEFORE, {"README.md": "no notebook"}, "readme only")
    dave = new_repo(remotes / "course" / "hw-dave")
    commit(dave, BEFORE, {"a.ipynb": "1", "b.ipynb": "2"}, "two notebooks")
    roster = tmp_path / "checkout" / "roster" / "student-repos.txt"
    roster.parent.mkdir(parents=True)
    entries = [alice, bob, carol, dave, remotes / "course" / "hw-missing"]
    roster.write_text("# one repository per line\n" + "\n".join(map(str, entries)) + "\n", encoding="utf-8")
    return tmp_path / "checkout", {"alice_commit": on_time}


def run_collect(
    checkout: Path, deadline: str = DEADLINE, checkpoints: bool = False
) -> subprocess.CompletedProcess[str]:
    context = {
        "secrets.STUDENT_REPOS_TOKEN": "",
        "inputs.deadline": deadline,
        "inputs.repos-file": "roster/student-repos.txt",
        "inputs.notebook": "",
        "inputs.checkpoints": "true" if checkpoints else "false",
    }
    return run_step(
        load_workflow(INSTRUCTOR_WORKFLOW), "collect", "collect", checkout, context, {"PYTHONPATH": str(ROOT)}
    )


def test_collect_takes_the_last_commit_before_the_deadline(classroom) -> None:
    checkout, expected = classroom
    done = run_collect(checkout)
    assert done.returncode == 0, done.stderr
    with (checkout / "submissions" / "manifest.csv").open(encoding="utf-8") as handle:
        rows = {Path(row["repo"]).name: row for row in csv.DictReader(handle)}
    assert {name: row["status"] for name, row in rows.items()} == {
        "hw-alice": "ok",
        "hw-bob": "no-commit-before-deadline",
        "hw-carol": "no-notebook",
        "hw-dave": "several-notebooks",
        "hw-missing": "clone-failed",
    }
    alice = rows["hw-alice"]
    assert alice["commit"] == expected["alice_commit"] and alice["commit_date"].startswith("2026-11-20")
    copied = checkout / "submissions" / alice["file"]
    assert copied.name == "course__hw-alice.ipynb" and copied.read_text(encoding="utf-8") == "on time"
    assert sorted(p.name for p in (checkout / "submissions" / "notebooks").iterdir()) == ["course__hw-alice.ipynb"]
    assert alice["checkpoint"] == "", "checkpoints are collected only when asked for"


def test_collect_brings_the_checkpoint_of_the_same_commit_when_asked(classroom) -> None:
    checkout, _ = classroom
    done = run_collect(checkout, checkpoints=True)
    assert done.returncode == 0, done.stderr
    with (checkout / "submissions" / "manifest.csv").open(encoding="utf-8") as handle:
        alice = next(row for row in csv.DictReader(handle) if row["repo"].endswith("hw-alice"))
    assert alice["checkpoint"] == "checkpoint.pt"
    copied = checkout / "submissions" / "notebooks" / "course__hw-alice.pt"
    assert copied.read_text(encoding="utf-8") == "weights on time"  # named so that {stem}.pt finds it


def test_the_collected_checkpoint_names_are_grader_ymls() -> None:
    """The collect job has no YAML reader: the workflow spells grader.yml's checkpoint names out."""
    from assignments.transformer_mt.settings import training_settings
    from autograder.config import load_config

    steps = load_workflow(INSTRUCTOR_WORKFLOW)["jobs"]["collect"]["steps"]
    names = next(step for step in steps if step.get("id") == "collect")["env"]["CHECKPOINT_NAMES"]
    assert names.split(",") == list(training_settings(load_config()).checkpoint_names)


# Prints the installed distributions (beyond the standard library and those given) whose modules the
# collector's import loads.
IMPORTS_BEYOND = """
import importlib.metadata, sys
at_start = set(sys.modules)  # what the interpreter's own start-up loaded (site hooks): not the collector's
import autograder.integrations.collect_submissions
owners = importlib.metadata.packages_distributions()
tops = {name.split(".")[0] for name in set(sys.modules) - at_start} - set(sys.stdlib_module_names) - {"autograder"}
# Only installed distributions can be missing there (Cython's runtime module and the like are not files).
needed = {dist.lower().replace("-", "_") for top in tops for dist in owners.get(top, [])}
print(",".join(sorted(needed - set(sys.argv[1].split(",")))))
"""


def test_the_collect_job_installs_every_package_the_collector_imports() -> None:
    """A bare setup-python runner has none of the project's packages: the job installs the pins its
    collector needs (PyYAML for the flag table, pydantic for the deadline) from requirements.lock."""
    script = find_step(load_workflow(INSTRUCTOR_WORKFLOW), "collect", "collector-packages")["run"]
    match = re.search(r"pins=\$\((.+)\)\n", script)
    assert match and "pip install --no-deps $pins" in script
    pins = subprocess.run(["bash", "-c", match.group(1)], cwd=ROOT, capture_output=True, text=True, check=True)
    installed = {pin.split("==")[0].lower().replace("-", "_") for pin in pins.stdout.split()}
    assert len(installed) == 6, pins.stdout
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_BEYOND, ",".join(installed)], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "", f"the collect job does not install: {done.stdout.strip()}"


@pytest.mark.parametrize("deadline", ["yesterday", "2026-12-01 23:59", "2026-13-01T00:00:00+09:00"])
def test_collect_refuses_a_deadline_git_would_misread(classroom, deadline) -> None:
    checkout, _ = classroom
    done = run_collect(checkout, deadline)
    assert done.returncode == 2 and "error" in done.stderr
    assert not (checkout / "submissions" / "manifest.csv").exists()


def test_deadline_and_names() -> None:
    assert f"{deadline_moment('2026-12-01T23:59:59+09:00'):{GIT_DATE}}" == "2026-12-01 23:59:59 +0900"
    assert f"{deadline_moment('2026-12-01T14:59:59Z'):{GIT_DATE}}" == "2026-12-01 14:59:59 +0000"
    assert safe_name("https://github.com/course/hw-alice.git") == "course__hw-alice"
    assert safe_name("course/hw-alice") == "course__hw-alice"


def test_grade_step_writes_gradebook_and_every_report(graded_examples: Path) -> None:
    out = graded_examples / "grading-output"
    for name in EXAMPLE_NAMES:
        for suffix in (".json", ".results.json", ".md", ".html", ".feedback.md", ".reporter.json"):
            assert (out / f"{name}{suffix}").is_file(), f"{name}{suffix}"
    with (out / "gradebook.csv").open(encoding="utf-8-sig") as handle:
        rows = {row["file"]: row for row in csv.DictReader(handle)}
    assert rows["correct_original_format.ipynb"]["total_points_earned"] == "80"
    assert rows["template_untouched.ipynb"]["total_points_earned"] == "0"
    assert rows["buggy_original_format.ipynb"]["status"] == "graded"
    assert float(rows["buggy_original_format.ipynb"]["grading_seconds"]) > 0


def training_only(unit_result_path: Path, target: Path) -> None:
    """A training-run result for the same file: unit parts not selected, training graded 20/20."""
    result = read_submission_json(unit_result_path)
    for part in result.parts:
        for check in part.checks:
            if part.part == "training":
                check.skipped, check.passed, check.points, check.message = False, True, check.max_points, ""
            else:
                check.skipped, check.passed, check.points = True, False, 0
                check.message = "not selected for this grading run"
        part.points = sum(c.points for c in part.checks if not c.skipped)
    result.extras = {"training": json.loads((FIXTURES / "training_history.json").read_text(encoding="utf-8"))}
    target.write_text(submission_json(result), encoding="utf-8")


def test_report_step_merges_training_into_the_gradebook(graded_examples: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "report-job"
    shutil.copytree(graded_examples / "grading-output", checkout / "grading-output")
    (checkout / "training-output").mkdir()
    training_only(
        checkout / "grading-output" / "correct_original_format.json",
        checkout / "training-output" / "correct_original_format.json",
    )
    (checkout / "submissions").mkdir()
    (checkout / "submissions" / "manifest.csv").write_text("repo,status\n", encoding="utf-8")
    done = run_step(
        load_workflow(INSTRUCTOR_WORKFLOW), "report", "merge", checkout, extra_env={"PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with (checkout / "final" / "gradebook.csv").open(encoding="utf-8-sig") as handle:
        rows = {row["file"]: row for row in csv.DictReader(handle)}
    correct = rows["correct_original_format.ipynb"]
    assert (correct["training"], correct["look_ahead_mask"], correct["total_points_earned"]) == ("20", "10", "100")
    assert rows["buggy_original_format.ipynb"]["training"] == ""  # not trained: skipped, not 0
    assert (checkout / "final" / "manifest.csv").is_file()
    page = (checkout / "final" / "correct_original_format.html").read_text(encoding="utf-8")
    assert 'lang="ko"' in page and "0.268" in page  # the course's feedback language
    summary = (checkout / ".runner" / "summary.md").read_text(encoding="utf-8")
    assert "| `correct_original_format.ipynb` |" in summary


def test_install_script_puts_the_torch_pin_first(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    stub = tmp_path / "python"
    stub.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n', encoding="utf-8")
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    script = ROOT / "autograder" / "integrations" / "install_env.sh"
    for variant, torch_line in [
        ("cpu", "-m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"),
        ("cuda", "-m pip install torch==2.13.0"),
    ]:
        log.unlink(missing_ok=True)
        done = subprocess.run(
            ["bash", str(script), variant], env={**os.environ, "PYTHON": str(stub)}, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        first, second = log.read_text(encoding="utf-8").splitlines()
        assert first == torch_line and second.startswith("-m pip install -r ")
    assert subprocess.run(["bash", str(script), "rocm"], capture_output=True).returncode == 2
