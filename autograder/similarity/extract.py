"""What a student wrote: a submission's code cells without the template's given lines (never executed)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autograder.assignment import Assignment
from autograder.assignment_folder import ASSIGNMENT_FILE, AssignmentError, read_settings
from autograder.config import PROJECT_ROOT

TEMPLATE_ROOT = PROJECT_ROOT / "student_template"


def template_notebooks(assignment: Assignment) -> list[Path]:
    """The notebooks students may start from: the assignment's `.ipynb` in student_template/ first,
    then the other templates the grader accepts (assignment.yml `similarity_templates`, paths from
    the project root: e.g. the course's original template, whose stubs are no student's code).

    Args:
        assignment: the loaded assignment (its manifest names the notebook and its folder).

    Returns:
        The paths (empty when the assignment ships no notebook and lists none).

    Raises:
        AssignmentError: `similarity_templates` is not a list of paths.
    """
    manifest = assignment.manifest
    folder = TEMPLATE_ROOT / manifest.student_dir if manifest.student_dir else TEMPLATE_ROOT
    own = [folder / item for item in manifest.student if item.endswith(".ipynb") and (folder / item).is_file()]
    others = read_settings(assignment.folder).get("similarity_templates") or []
    if not isinstance(others, list) or not all(isinstance(item, str) for item in others):
        raise AssignmentError("assignment_error.similarity_templates", path=assignment.folder / ASSIGNMENT_FILE)
    return own[:1] + [PROJECT_ROOT / item for item in others]


def solved_notebook(assignment: Assignment) -> Path | None:
    """The assignment's master notebook with its solutions (`<name>.ipynb` in its folder), or None."""
    path = assignment.folder / f"{assignment.name}.ipynb"
    return path if path.is_file() else None


def _key(line: str) -> str:
    """A line compared without its indentation and surrounding whitespace."""
    return " ".join(line.split())


def given_lines(cells: Iterable[str]) -> frozenset[str]:
    """The template's lines, whitespace-normalised, for removing them from submissions.

    Args:
        cells: the template's code cells.

    Returns:
        The set of its non-blank lines (placeholders such as `...` included: a student who left
        one has written nothing there).
    """
    return frozenset(key for cell in cells for line in cell.splitlines() if (key := _key(line)))


def student_code(cells: Iterable[str], given: frozenset[str]) -> str:
    """The lines of a submission that are not the template's, cell after cell.

    Whole lines equal to a template line (ignoring whitespace) are given code and dropped, so a
    student's edit of a given line stays; what remains is what the student wrote.

    Args:
        cells: the submission's code cells.
        given: from `given_lines` (empty: keep everything).

    Returns:
        The remaining code; cells separated by a blank line.
    """
    kept = []
    for cell in cells:
        lines = [line for line in cell.splitlines() if _key(line) and _key(line) not in given]
        if lines:
            kept.append("\n".join(lines))
    return "\n\n".join(kept) + ("\n" if kept else "")


OWN_UNIT = "own"  # a unit of cells that hold no template line: wholly the student's


def _unit_name(cell: str) -> str:
    """A template cell's name: its first line that is not blank or a comment."""
    code = (line.strip() for line in cell.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    return next(code, cell.strip().splitlines()[0] if cell.strip() else "cell")


def student_units(cells: Iterable[str], template_cells: list[str]) -> dict[str, str]:
    """What the student wrote, per template cell (a unit: one graded part's code, usually).

    Each submission cell belongs to the template cell whose given lines it shares most (so moving
    cells around changes nothing); the lines that are not given are the unit's code.

    Args:
        cells: the submission's code cells.
        template_cells: the template's code cells.

    Returns:
        Unit name (the template cell's first code line, or `OWN_UNIT`) -> the student's code there.
    """
    given_by_cell = [given_lines([cell]) for cell in template_cells]
    given = frozenset().union(*given_by_cell)
    units: dict[str, list[str]] = {}
    for cell in cells:
        keys = {_key(line) for line in cell.splitlines()}
        shared = [len(keys & lines) for lines in given_by_cell]
        best = max(range(len(shared)), key=lambda index: shared[index], default=None)
        name = OWN_UNIT if best is None or shared[best] == 0 else _unit_name(template_cells[best])
        code = student_code([cell], given)
        if code:
            units.setdefault(name, []).append(code)
    return {name: "\n".join(codes) for name, codes in units.items()}
