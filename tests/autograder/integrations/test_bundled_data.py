"""The graded assignment's bundled data: its declaration and the variable the Gradescope front end sets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.assignment_folder import ASSIGNMENTS_DIR, AssignmentError, BundledData, read_bundled_data
from autograder.integrations.gradescope.run import grade_upload


def test_the_variable_points_at_the_bundled_folder_unless_set(tmp_path: Path) -> None:
    data = BundledData(env="SOME_DATA_DIR", bundled="data/some")
    assert data.environment(tmp_path, {}) == {}  # nothing bundled there
    (tmp_path / "data" / "some").mkdir(parents=True)
    assert data.environment(tmp_path, {}) == {"SOME_DATA_DIR": str(tmp_path / "data" / "some")}
    assert data.environment(tmp_path, {"SOME_DATA_DIR": "/elsewhere"}) == {}


def test_the_gradescope_front_end_points_the_variable_at_the_bundled_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = read_bundled_data(ASSIGNMENTS_DIR / "transformer_mt")  # the project grader.yml's assignment
    assert declared is not None
    assert read_bundled_data(ASSIGNMENTS_DIR / "attention_encoder") is None  # Part 1 reads no data
    (tmp_path / "submission").mkdir()
    monkeypatch.setenv(declared.env, "/elsewhere")  # a variable the machine sets wins
    grade_upload(tmp_path / "submission", tmp_path / "results.json")
    assert os.environ[declared.env] == "/elsewhere"
    (tmp_path / declared.bundled).mkdir(parents=True)
    monkeypatch.setenv(declared.env, "")  # unset (restored after the test)
    grade_upload(tmp_path / "submission", tmp_path / "results.json")
    assert os.environ[declared.env] == str(tmp_path / declared.bundled)


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
