"""Part 1 graded by the engine's own paths: the loader, the CLI, the build, Otter and Gradescope zips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from assignments import build
from autograder.assignment import load_assignment
from autograder.assignment_folder import AssignmentError, grader_yml_of, read_manifest
from autograder.config import load_config
from autograder.i18n import part_title, use_language
from autograder.integrations.gradescope.build_zip import build_zip

REPO = build.REPO
NAME = "attention_encoder"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PART = build.target(NAME)
TEMPLATE = PART.student_dir / PART.master.name
UNIT_PARTS = ("attention", "multi_head_attention", "positional_encoding", "feed_forward", "encoder_layer", "encoder")
TIMEOUT_S = 1200  # a loaded 2-core machine: several times the quiet-machine time


def _grade_cli(submissions: dict[str, Path], out: Path, *flags: str) -> dict[str, dict]:
    """`python -m autograder grade --assignment attention_encoder` on named copies; stem -> result JSON."""
    folder = out / "submissions"
    folder.mkdir(parents=True)
    for stem, path in submissions.items():
        suffix = ".py" if path.name.endswith(".py.txt") else path.suffix  # fixtures: .py.txt
        shutil.copyfile(path, folder / f"{stem}{suffix}")
    command = [sys.executable, "-m", "autograder", "grade", "--assignment", NAME, str(folder)]
    subprocess.run(
        [*command, "--out", str(out / "reports"), "--quiet", *flags], cwd=REPO, check=True, timeout=TIMEOUT_S
    )
    return {stem: json.loads((out / "reports" / f"{stem}.json").read_text()) for stem in submissions}


def _points(result: dict) -> dict[str, float]:
    return {p["part"]: p["points"] for p in result["parts"]}


def test_part_1_loads_with_its_parts_hooks_and_manifest() -> None:
    assignment = load_assignment(NAME)
    assert assignment.name == NAME and (assignment.checks_dir / "conftest.py").is_file()
    assert assignment.training is not None and assignment.training_part == "training"
    assert assignment.messages_dir is not None and (assignment.messages_dir / "ko.yml").is_file()
    config = load_config(overrides={"assignment.name": NAME})
    assert list(config.parts) == [*UNIT_PARTS, "training"]
    assert config.training_part() == "training" and "training" in config.disabled_parts()
    manifest = assignment.manifest
    # Of mtkit, the student gets only the module that words grader.check's results (mtkit/otter_checks.py).
    student = ("attention_encoder.ipynb", "tests", "mtkit/__init__.py", "mtkit/otter_checks.py")
    assert manifest.student_dir == NAME and manifest.student == student
    for path in manifest.grader:
        assert (REPO / path).exists(), path


def test_part_titles_come_from_the_graded_assignments_catalogue() -> None:
    folder = load_assignment(NAME).messages_dir
    with use_language("ko", folder):
        assert part_title("training", "x") == "학습 (수열 뒤집기)"
        assert part_title("positional_encoding", "x") == "위치 인코딩"
    with use_language("ko"):  # no assignment catalogue: the engine's (Part 2's title)
        assert part_title("training", "x") != "학습 (수열 뒤집기)"
    with use_language("en", folder):
        assert part_title("positional_encoding", "Positional encoding") == "Positional encoding"


def test_part_1_is_graded_with_its_own_grader_yml() -> None:
    own = REPO / "assignments" / NAME / "grader.yml"
    assert grader_yml_of(NAME) == own and grader_yml_of("transformer_mt") == REPO / "grader.yml"
    config = load_config(own)
    assert type(config).__name__ == "AttentionEncoderConfig" and config.assignment.name == NAME
    assert config == load_config(overrides={"assignment.name": NAME})  # what `grade --assignment` reads


def test_the_manifest_refuses_a_student_dir_that_is_not_a_folder_name(tmp_path: Path) -> None:
    (tmp_path / "assignment.yml").write_text("ships:\n  student_dir: ../elsewhere\n", encoding="utf-8")
    with pytest.raises(AssignmentError, match="student_dir"):
        read_manifest(tmp_path)


def test_the_gradescope_zip_ships_part_1(tmp_path: Path) -> None:
    out = build_zip(tmp_path / "gradescope.zip", assignment=NAME)
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        assert archive.read("grader.yml") == (REPO / "assignments" / NAME / "grader.yml").read_bytes()
    assert {"run_autograder", "setup.sh", "assignments/attention_encoder/assignment.py"} <= names
    assert "assignments/attention_encoder/reference/model.py" in names


def test_the_cli_grades_the_solution_fully_and_the_template_to_zero_in_korean(tmp_path: Path) -> None:
    graded = _grade_cli({"solution": FIXTURES / "correct.py.txt", "template": TEMPLATE}, tmp_path)
    solution, template = _points(graded["solution"]), _points(graded["template"])
    maxima = {p["part"]: p["max_points"] for p in graded["solution"]["parts"]}
    assert {p: solution[p] for p in UNIT_PARTS} == {p: maxima[p] for p in UNIT_PARTS}
    assert solution["training"] == 0  # not enabled in this run: skipped, not failed
    assert all(points == 0 for points in template.values())
    failures = [c["message"] for p in graded["template"]["parts"] for c in p["checks"] if p["part"] != "training"]
    assert failures and all(any("\uac00" <= ch <= "\ud7a3" for ch in m) for m in failures)  # Hangul
    report = (tmp_path / "reports" / "template.md").read_text(encoding="utf-8")
    assert "위치 인코딩" in report  # the part title from the assignment's own catalogue


def test_the_committed_student_template_is_what_the_build_writes(tmp_path: Path) -> None:
    out = build.run_assign(tmp_path, part=PART)
    assert build.stale_files(out / "student", part=PART) == []


@pytest.mark.slow
def test_the_cli_grades_the_training_part_with_train(tmp_path: Path) -> None:
    graded = _grade_cli({"solution": FIXTURES / "correct.py.txt"}, tmp_path, "--train")
    assert _points(graded["solution"])["training"] == 10
    details = graded["solution"]["extras"]["training"]
    assert details["accuracy"] >= details["threshold"]


@pytest.mark.e2e
@pytest.mark.timeout(2400)
def test_otter_run_gives_the_solution_full_marks(tmp_path: Path) -> None:
    paths = build.build(tmp_path / "student", tmp_path / "dist", part=PART)
    with zipfile.ZipFile(paths["zip"]) as archive:
        assert archive.read("grader.yml") == (REPO / "assignments" / NAME / "grader.yml").read_bytes()
        plugin = json.loads(archive.read("otter_config.json"))["plugins"][0]
    questions = next(iter(plugin.values()))["questions"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    (tmp_path / "run").mkdir()
    command = [sys.executable, "-m", "otter", "run", "-a", str(paths["zip"]), "-o", str(tmp_path / "run")]
    completed = subprocess.run(
        [*command, "--no-logo", str(paths["solution"])],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    tests = json.loads((tmp_path / "run" / "results.json").read_text())["tests"]
    scores = {t["name"]: (t["score"], t["max_score"]) for t in tests}
    assert all(scores[questions[part]][0] == scores[questions[part]][1] > 0 for part in UNIT_PARTS)


@pytest.mark.e2e
@pytest.mark.timeout(2400)
def test_the_gradescope_zip_grades_the_solution_with_part_1s_titles(tmp_path: Path) -> None:
    root = tmp_path / "autograder"
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    with zipfile.ZipFile(build_zip(tmp_path / "gradescope.zip", assignment=NAME)) as archive:
        archive.extractall(root / "source")
    solution = build.build(tmp_path / "student", tmp_path / "dist", part=PART)["solution"]
    shutil.copyfile(solution, root / "submission" / PART.master.name)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    subprocess.run(["bash", "run_autograder"], cwd=root / "source", env=env, check=True, timeout=TIMEOUT_S)
    document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert document["score"] == sum(p["points"] for n, p in load_assignment(NAME).parts.items() if n != "training")
    assert "학습 (수열 뒤집기)" in document["output"]  # the skipped training part, titled by Part 1's catalogue
