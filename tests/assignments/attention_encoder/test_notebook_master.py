"""The Part 1 master notebook: its solutions get full marks, its config names the assignment's parts."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from ae_inprocess import InProcessStudent
from ae_suite_runner import parts, points, run_suite

from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS

MASTER = Path(__file__).resolve().parents[3] / "assignments" / "attention_encoder" / "attention_encoder.ipynb"


def _cells() -> list[dict[str, object]]:
    cells: list[dict[str, object]] = json.loads(MASTER.read_text(encoding="utf-8"))["cells"]
    return cells


def _source(cell: dict[str, object]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


def _solution_code() -> str:
    """The master's code as a kernel would run it: no Otter, no public tests, no training run."""
    keep = []
    for cell in _cells():
        source = _source(cell)
        metadata = cell.get("metadata") or {}
        tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
        if cell["cell_type"] != "code" or "otter_ignore" in tags:
            continue
        if "import otter" in source or source.startswith("grader.check") or "# BEGIN TEST CONFIG" in source:
            continue
        keep.append(source)
    return "\n\n".join(keep)


def test_the_masters_solutions_get_full_marks() -> None:
    got = points(run_suite(InProcessStudent(_solution_code(), GRADER_GLOBALS)))
    assert got == {name: float(part["points"]) for name, part in parts().items() if name != "training"}


def test_the_masters_questions_are_the_assignments_parts() -> None:
    config = yaml.safe_load(_source(_cells()[0]).removeprefix("# ASSIGNMENT CONFIG"))
    plugin = config["generate"]["plugins"][0]["autograder.otter_bridge.EnginePlugin"]
    assert sorted(plugin["questions"]) == sorted(parts())
    declared = {}
    for cell in _cells():
        source = _source(cell)
        if cell["cell_type"] == "raw" and source.startswith("# BEGIN QUESTION"):
            question = yaml.safe_load(source.removeprefix("# BEGIN QUESTION"))
            declared[question["name"]] = question["points"]
    assert declared == {plugin["questions"][name]: part["points"] for name, part in parts().items()}


def test_the_student_version_has_no_solutions() -> None:
    # Every solution sits between solution markers, so that Otter Assign strips it.
    for cell in _cells():
        source = _source(cell)
        if cell["cell_type"] == "code" and "# BEGIN SOLUTION" in source:
            assert "# END SOLUTION" in source
    assert "reference" not in _solution_code()
