"""`python -m autograder new-assignment NAME` in a copy of the project: the scaffold grades 100/0 out of
the box through the CLI, and the project's own credit invariant fails on a deliberately broken copy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # a project copy, an Otter Assign build and CLI gradings (about a minute)

REPO = Path(__file__).resolve().parents[2]
# What the copy needs: the engine, the assignments package and its builders, the tests' invariants.
COPIED = ("autograder", "assignments", "mtkit", "container", "tests", "grader.yml", "pyproject.toml")
COPIED_FILES = ("requirements.lock",)
INVARIANT = (
    "tests/autograder/test_credit.py::test_every_part_of_both_assignments_has_a_gate_and_a_small_structural_share"
)


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A Python module run in the copy (its own packages first on the path)."""
    return subprocess.run([sys.executable, "-m", *args], cwd=project, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project's tracked files with the scaffold `demo` written and built in it."""
    copy = tmp_path_factory.mktemp("project")
    tracked = subprocess.run(["git", "ls-files", *COPIED, *COPIED_FILES], cwd=REPO, capture_output=True, text=True)
    for name in tracked.stdout.splitlines():
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    written = run(copy, "autograder", "new-assignment", "demo")
    assert written.returncode == 0, written.stderr
    built = run(copy, "assignments.build", "--assignment", "demo")
    assert built.returncode == 0, built.stdout + built.stderr
    return copy


def test_the_scaffold_is_one_folder_that_grades_100_solved_and_0_untouched(project: Path) -> None:
    folder = project / "assignments" / "demo"
    assert not (folder / "assignment.py").exists() and (folder / "reference.py").is_file()
    assert not list(folder.rglob("*.txt"))  # the templates' data endings are gone
    solved, untouched = project / "solved.ipynb", project / "untouched.ipynb"
    shutil.copy(folder / "demo.ipynb", solved)
    shutil.copy(project / "student_template" / "demo" / "demo.ipynb", untouched)
    graded = run(project, "autograder", "grade", "--assignment", "demo", str(solved), str(untouched), "--out", "out")
    assert graded.returncode == 0, graded.stderr
    results = {
        path.stem: json.loads((project / "out" / f"{path.stem}.json").read_text()) for path in (solved, untouched)
    }
    assert {stem: result["points"] for stem, result in results.items()} == {"solved": 10.0, "untouched": 0.0}
    again = run(project, "autograder", "new-assignment", "demo")
    assert again.returncode == 2 and "demo" in again.stderr  # an existing folder is never overwritten


def test_the_credit_invariant_fails_on_a_broken_scaffold_copy(project: Path) -> None:
    args = ("pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-o", "addopts=", INVARIANT)
    assert run(project, *args).returncode == 0
    settings = project / "assignments" / "demo" / "assignment.yml"
    original = settings.read_text(encoding="utf-8")
    # A structural share of 30%: an answer doing no work would keep 3 of 10 points.
    settings.write_text(original.replace("softmax_shape: 1", "softmax_shape: 3").replace("values: 9", "values: 7"))
    try:
        failed = run(project, *args)
    finally:
        settings.write_text(original, encoding="utf-8")
    assert failed.returncode == 1 and "('demo', 'softmax', ['softmax_shape'])" in failed.stdout, failed.stdout
