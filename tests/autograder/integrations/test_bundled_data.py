"""The graded assignment's bundled data: its declaration, the variable front ends set, the shell helper."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.assignment_folder import ASSIGNMENTS_DIR, AssignmentError, BundledData, read_bundled_data
from autograder.integrations.bundled_data import data_environment, main

ROOT = Path(__file__).resolve().parents[3]


def test_the_variable_points_at_the_bundled_folder_unless_set(tmp_path: Path) -> None:
    data = BundledData(env="SOME_DATA_DIR", bundled="data/some")
    assert data.environment(tmp_path, {}) == {}  # nothing bundled there
    (tmp_path / "data" / "some").mkdir(parents=True)
    assert data.environment(tmp_path, {}) == {"SOME_DATA_DIR": str(tmp_path / "data" / "some")}
    assert data.environment(tmp_path, {"SOME_DATA_DIR": "/elsewhere"}) == {}


def test_the_project_grader_yml_grades_an_assignment_with_data(tmp_path: Path) -> None:
    declared = read_bundled_data(ASSIGNMENTS_DIR / "transformer_mt")
    assert declared is not None
    (tmp_path / declared.bundled).mkdir(parents=True)
    assert data_environment(tmp_path, {}) == {declared.env: str(tmp_path / declared.bundled)}
    assert read_bundled_data(ASSIGNMENTS_DIR / "attention_encoder") is None  # Part 1 reads no data


@pytest.mark.parametrize(
    "text, problem",
    [
        ("data: [x]\n", "expected a mapping"),
        ("data: {env: 1, bundled: data/x}\n", "data.env"),
        ("data: {env: X_DIR, bundled: ../x}\n", "data.bundled"),
        ("data: {env: X_DIR, bundled: /abs}\n", "data.bundled"),
        ("data: {env: X_DIR, bundled: data/x, files: x}\n", "data.files"),
    ],
)
def test_a_bad_declaration_names_its_key(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "assignment.yml").write_text(text)
    with pytest.raises(AssignmentError, match=problem):
        read_bundled_data(tmp_path)


def test_the_shell_helper_prints_name_value_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    (tmp_path / "data" / "multi30k").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "MULTI30K_DIR"}
    run = subprocess.run(
        [sys.executable, "-m", "autograder.integrations.bundled_data", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (run.returncode, run.stdout) == (0, f"MULTI30K_DIR={tmp_path / 'data' / 'multi30k'}\n")
