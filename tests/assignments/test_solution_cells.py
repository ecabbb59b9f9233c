"""The masters' solution blocks are generated from the reference, and staleness is reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from assignments.solution_cells import SOLUTIONS_FILE, check_or_write, load_solutions, main
from autograder.assignment_folder import available_assignments

ASSIGNMENTS = Path(__file__).resolve().parents[2] / "assignments"
FOLDERS = sorted(path.parent for path in ASSIGNMENTS.glob(f"*/{SOLUTIONS_FILE}"))
PART2 = ASSIGNMENTS / "transformer_mt"
# A line of Part 2's master generated from assignments.transformer_mt.reference.model.DecoderLayer.forward.
GENERATED_LINE = "hidden = self.norm1(self.dropout1(attended) + dec)"


def _copy(folder: Path, tmp_path: Path) -> Path:
    """The assignment's declaration and master in a folder of their own (sources stay the repository's)."""
    copy = tmp_path / folder.name
    copy.mkdir()
    shutil.copy(folder / SOLUTIONS_FILE, copy)
    shutil.copy(load_solutions(folder).notebook, copy)
    return copy


def test_every_assignment_declares_its_masters_solutions() -> None:
    undeclared = sorted(set(available_assignments()) - {folder.name for folder in FOLDERS})
    assert FOLDERS and not undeclared, (
        f"assignments without {SOLUTIONS_FILE} (which master cells are generated from the reference): {undeclared}"
    )


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_the_master_is_generated_from_the_reference(folder: Path) -> None:
    assert check_or_write(folder, write=False) == []


def test_the_check_command_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check"]) == 0
    assert capsys.readouterr().out == ""


def test_a_stale_block_is_shown_and_rewritten_byte_for_byte(tmp_path: Path) -> None:
    copy = _copy(PART2, tmp_path)
    notebook = copy / "transformer_mt.ipynb"
    original = notebook.read_bytes()
    assert original.decode().count(GENERATED_LINE) == 1
    notebook.write_text(original.decode().replace(GENERATED_LINE, "hidden = self.norm1(attended + dec)"))
    problems = check_or_write(copy, write=False)
    assert problems[0].endswith("is stale (python -m assignments.solution_cells --write):")
    assert "-        hidden = self.norm1(attended + dec)" in problems
    assert f"+        {GENERATED_LINE}" in problems
    assert check_or_write(copy, write=True) == []
    assert notebook.read_bytes() == original


def test_every_solution_block_must_be_declared(tmp_path: Path) -> None:
    copy = _copy(PART2, tmp_path)
    declaration = yaml.safe_load((copy / SOLUTIONS_FILE).read_text(encoding="utf-8"))
    declaration["kept"] = [entry for entry in declaration["kept"] if entry["cell"] != "cell-055"]
    declaration["generated"].append(
        {
            "cell": "cell-011",
            "block": 0,
            "source": "assignments/transformer_mt/reference/model.py",
            "definition": "Decoder.forward",
        }
    )
    (copy / SOLUTIONS_FILE).write_text(yaml.safe_dump(declaration), encoding="utf-8")
    assert check_or_write(copy, write=False) == [
        "transformer_mt: cell-011 block 0: no such solution block in the notebook",
        "transformer_mt: cell-055 block 0: neither generated nor kept in solutions.yml",
    ]
