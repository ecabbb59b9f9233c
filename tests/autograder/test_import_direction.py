"""Imports run one way: executors, the store, the config loader and the references stay below what uses them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from import_graph import imported_modules

ROOT = Path(__file__).resolve().parents[2]
# The trusted solutions, each in its assignment's folder (a package, or tensor_basics' one module).
REFERENCES = (
    "assignments/attention_encoder/reference",
    "assignments/transformer_mt/reference",
    "assignments/tensor_basics/reference.py",
)


def package_of(path: Path) -> list[str]:
    """The package a file below ROOT belongs to, as name parts (anchors its relative imports)."""
    return list(path.relative_to(ROOT).parent.parts)


def offending(files: list[Path], forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    """The files among `files` that import a forbidden module (or one below it), with what they import."""
    found = {}
    for path in files:
        imported = imported_modules(path.read_text(encoding="utf-8"), ".".join(package_of(path)))
        hits = sorted(name for name in imported if any(name == f or name.startswith(f + ".") for f in forbidden))
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    return found


def python_files(folder: str) -> list[Path]:
    """The Python files below ROOT/folder (or the one file it names)."""
    target = ROOT / folder
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    assert files, f"{folder} was not found"
    return files


@pytest.mark.parametrize(
    ("where", "forbidden"),
    [
        # The engine is passed to the batch by the front end; executors get what they run as arguments.
        ("autograder/executors", ("autograder.batch", "autograder.engine")),
        ("autograder/batch.py", ("autograder.engine",)),
        ("autograder/grading.py", ("autograder.batch", "autograder.engine", "autograder.executors")),
        # The store keeps results; reports/ renders them.
        ("autograder/results_store.py", ("autograder.reports.files", "autograder.reports.class_view")),
        # Validating a configuration reads assignment folders as files, never the loadable assignment.
        ("autograder/config", ("autograder.assignment",)),
        ("autograder/assignment_folder.py", ("autograder.config", "autograder.assignment")),
        # The trusted solutions sit below the grader (test_references_import_only_references below);
        # the engine's check helpers name no assignment.
        *[(reference, ("autograder",)) for reference in REFERENCES],
        ("autograder/checks", ("mtkit", "assignments")),
    ],
)
def test_imports_run_one_way(where: str, forbidden: tuple[str, ...]) -> None:
    assert offending(python_files(where), forbidden) == {}


@pytest.mark.parametrize("where", REFERENCES)
def test_references_import_only_references(where: str) -> None:
    """A reference lives in its assignment's folder, but imports no other part of any assignment."""
    imported = {
        name
        for path in python_files(where)
        for name in imported_modules(path.read_text(encoding="utf-8"), ".".join(package_of(path)))
    }
    assert not [n for n in imported if n.startswith("assignments.") and "reference" not in n.split(".")]


@pytest.mark.parametrize(
    "module",
    [
        "assignments.attention_encoder.reference",
        "assignments.transformer_mt.reference.model",
        "assignments.transformer_mt.reference.train",
        "assignments.tensor_basics.reference",
    ],
)
def test_a_reference_imports_without_the_engine(module: str) -> None:
    """Importing a reference (its assignment's package __init__ included) loads no grading engine module."""
    code = f"import sys, {module}; print([m for m in sys.modules if m.split('.')[0] == 'autograder'])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


@pytest.mark.parametrize(
    "source",
    [
        "from autograder.batch import grade_all\n",
        "import autograder.batch\n",
        "def f():\n    from ..batch import grade_all\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from autograder import batch\n",
    ],
)
def test_every_import_form_is_seen(source: str) -> None:
    imported = imported_modules(source, "autograder.executors")
    assert "autograder.batch" in imported
