"""`new-assignment`'s writer (the CLI grading of what it writes: tests/assignments/test_scaffold.py, e2e)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from autograder.assignment_folder import AssignmentError, read_declared, write_scaffold
from autograder.cli import main


def test_the_scaffold_is_written_with_its_name_and_without_template_endings(tmp_path: Path) -> None:
    folder = write_scaffold("demo", tmp_path)
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert names == [
        "__init__.py",
        "assignment.yml",
        "checks/__init__.py",
        "checks/declared.yml",
        "checks/test_declared.py",
        "demo.ipynb",
        "grader.yml",
        "messages/en.yml",
        "messages/ko.yml",
        "reference.py",
        "solutions.yml",
    ]
    assert not any("__NAME__" in (folder / name).read_text(encoding="utf-8") for name in names)
    assert yaml.safe_load((folder / "grader.yml").read_text())["assignment"]["name"] == "demo"
    assert json.loads((folder / "demo.ipynb").read_text())["metadata"]["autograder"] == {"assignment": "demo"}
    compile((folder / "reference.py").read_text(), "reference.py", "exec")
    assert read_declared(folder)["softmax"]["checks"]["softmax_values"]["kind"] == "values"


def test_an_existing_folder_or_a_bad_name_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_scaffold("demo", tmp_path)
    for name in ("demo", "not-an-identifier"):
        with pytest.raises(AssignmentError, match="expected a new folder"):
            write_scaffold(name, tmp_path)
    assert main(["new-assignment", "not-an-identifier"]) == 2
    err = capsys.readouterr().err  # the console's language by default: Korean (assignment_error.new_folder)
    assert err.startswith("오류: ") and "not-an-identifier: Python 식별자 이름의 새 폴더여야 합니다" in err
