"""bench/walk_figures.py: which files count as the project's, and the walk of a real (small) grade command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench_scripts import load_bench

REPO = Path(__file__).resolve().parents[2]


def test_only_the_grader_s_own_files_count() -> None:
    walk = load_bench("walk_figures")
    assert walk.project_file(str(REPO / "autograder" / "cli.py"), REPO) == "autograder/cli.py"
    assert walk.project_file("<frozen os>", REPO) is None  # frozen modules resolve under the cwd otherwise
    assert walk.project_file("<string>", REPO) is None
    assert walk.project_file(str(REPO / "tests" / "conftest.py"), REPO) is None
    assert walk.project_file(str(REPO / ".venv" / "lib" / "x.py"), REPO) is None
    assert walk.project_file("/usr/lib/python3.11/os.py", REPO) is None


@pytest.mark.e2e  # grades a notebook in the sandbox
def test_the_walk_of_a_grade_command_starts_at_the_cli_and_reaches_the_engine() -> None:
    notebook = REPO / "examples" / "template_untouched.ipynb"  # quick: every part fails to load
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "walk_figures.py"), str(notebook), "--top", "3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["files"][0] == "autograder/cli.py"
    assert {"autograder/engine.py", "autograder/batch.py"} <= set(figures["files"])
    assert figures["files_on_walk"] == len(figures["files"]) and len(figures["most_re_entered"]) <= 3
