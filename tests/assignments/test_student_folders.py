"""The student folders `make template` writes: one check cell per question, and what the integration docs list."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# assignment -> (master notebook, student notebook)
NOTEBOOKS = {
    "attention_encoder": (
        REPO / "assignments" / "attention_encoder" / "attention_encoder.ipynb",
        REPO / "student_template" / "attention_encoder" / "attention_encoder.ipynb",
    ),
    "transformer_mt": (
        REPO / "assignments" / "transformer_mt" / "transformer_mt.ipynb",
        REPO / "student_template" / "transformer_mt.ipynb",
    ),
}


def _cells(path: Path, kind: str) -> list[str]:
    """The sources of a notebook's cells of one kind (code, raw, markdown)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == kind]


@pytest.mark.parametrize("assignment", sorted(NOTEBOOKS))
def test_the_student_notebook_has_one_check_cell_per_question(assignment: str) -> None:
    master, student = NOTEBOOKS[assignment]
    # The master's questions that have public tests (a "# BEGIN TESTS" cell inside the question).
    questions: list[str] = []
    for cell in _cells(master, "raw"):
        if m := re.match(r"# BEGIN QUESTION\nname: (q\d+)", cell):
            name = m.group(1)
        elif cell.startswith("# BEGIN TESTS"):
            questions.append(name)
    checks = [
        m.group(1)
        for cell in _cells(student, "code")
        if (m := re.fullmatch(r'grader\.check\("(q\d+)"\)', cell.strip()))
    ]
    assert questions and checks == questions


def test_part1s_folder_holds_what_the_integration_docs_list() -> None:
    folder = REPO / "student_template" / "attention_encoder"
    docs = (REPO / "docs" / "INTEGRATIONS.md").read_text(encoding="utf-8")
    listed = re.search(r"`student_template/attention_encoder/` for Part 1: notebook, (.*?);", docs, re.S)
    assert listed is not None
    names = re.findall(r"`([^`]+?)/?`", listed.group(1))
    assert names and all((folder / name).exists() for name in names), names
    # The same install line as Part 2's students (the top-level template's file).
    assert (folder / "requirements.txt").read_bytes() == (REPO / "student_template" / "requirements.txt").read_bytes()
