"""The master notebooks' solution blocks, generated from the reference (`--check` finds stale ones).

Usage: python -m assignments.solution_cells --check   # exit 1 and show what differs if a block is stale
       python -m assignments.solution_cells --write   # rewrite the stale blocks in the masters

Each assignment folder with a `solutions.yml` declares, for every solution block of its master
notebook (a `# BEGIN SOLUTION` ... `# END SOLUTION` span or a line ending in `# SOLUTION`, counted
in order within a cell), either the reference statements it is generated from or why the notebook
keeps its own text. The text around the blocks (what students receive) is the notebook's own.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assignments.solution_source import REPO, SolutionSourceError, reference_statements

ASSIGNMENTS = Path(__file__).resolve().parent
SOLUTIONS_FILE = "solutions.yml"
BEGIN, END, ONE_LINE = "# BEGIN SOLUTION", "# END SOLUTION", "  # SOLUTION"


@dataclass(frozen=True)
class Block:
    """One solution block of a cell: `lines[start:stop]` is its code (one line for a `# SOLUTION` line)."""

    start: int
    stop: int
    indent: str
    one_line: bool


@dataclass(frozen=True)
class Generated:
    """A block generated from reference statements (`solution_source.reference_statements`)."""

    cell: str
    block: int
    source: str
    definition: str
    statements: str = ":"


@dataclass(frozen=True)
class Solutions:
    """An assignment's declaration: its master, the generated blocks, the blocks it keeps (and why)."""

    notebook: Path
    generated: tuple[Generated, ...]
    kept: dict[tuple[str, int | None], str]  # (cell id, block index or None for all of the cell's) -> why


def load_solutions(folder: Path) -> Solutions:
    """Read `<folder>/solutions.yml`.

    Args:
        folder: an assignment folder.

    Returns:
        Its declaration.
    """
    data: dict[str, Any] = yaml.safe_load((folder / SOLUTIONS_FILE).read_text(encoding="utf-8"))
    generated = tuple(Generated(**entry) for entry in data.get("generated", []))
    kept = {
        (entry["cell"], None if entry.get("block") is None else int(entry["block"])): str(entry["why"])
        for entry in data.get("kept", [])
    }
    return Solutions(folder / data["notebook"], generated, kept)


def solution_blocks(lines: list[str]) -> list[Block]:
    """The solution blocks of a cell's lines, in order.

    Args:
        lines: the cell's source split at newlines.

    Returns:
        One `Block` per `# BEGIN SOLUTION`/`# END SOLUTION` pair and per `# SOLUTION` line.
    """
    blocks: list[Block] = []
    opened: int | None = None
    for index, line in enumerate(lines):
        text = line.strip()
        if text == BEGIN:
            opened = index
        elif text == END and opened is not None:
            blocks.append(Block(opened + 1, index, _indent(lines[opened]), one_line=False))
            opened = None
        elif opened is None and line.endswith(ONE_LINE):
            blocks.append(Block(index, index + 1, _indent(line), one_line=True))
    return blocks


def _indent(line: str) -> str:
    """The leading whitespace of a line."""
    return line[: len(line) - len(line.lstrip())]


def _block_text(entry: Generated, block: Block) -> list[str]:
    """The lines a block should hold."""
    text = reference_statements(entry.source, entry.definition, entry.statements)
    if block.one_line:
        if "\n" in text:
            raise SolutionSourceError(f"{entry.cell} block {entry.block}: a `# SOLUTION` line needs one line")
        return [block.indent + text + ONE_LINE]
    return textwrap.indent(text, block.indent).split("\n")  # blank lines stay empty


def regenerate(notebook: dict[str, Any], solutions: Solutions) -> tuple[dict[str, Any], list[str]]:
    """The notebook with its declared blocks generated, and the problems of the declaration.

    Args:
        notebook: the master notebook's JSON.
        solutions: the assignment's declaration.

    Returns:
        (a new notebook, problems): a problem is a block neither generated nor kept, or a declared
        block that does not exist.
    """
    notebook = json.loads(json.dumps(notebook))
    by_cell = {cell.get("id"): cell for cell in notebook["cells"]}
    declared = {(entry.cell, entry.block): entry for entry in solutions.generated}
    kept = solutions.kept
    problems = [
        f"{cell} block {block}: both generated and kept"
        for cell, block in declared
        if (cell, block) in kept or (cell, None) in kept
    ]
    for cell_id, block_index in [*declared, *kept]:
        cell = by_cell.get(cell_id)
        count = len(solution_blocks("".join(cell["source"]).split("\n"))) if cell is not None else 0
        if count == 0 or (block_index is not None and block_index >= count):
            problems.append(f"{cell_id} block {block_index}: no such solution block in the notebook")
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell_id = cell.get("id")
        lines = "".join(cell["source"]).split("\n")
        blocks = solution_blocks(lines)
        for index in range(len(blocks)):
            if (cell_id, index) not in declared and (cell_id, index) not in kept and (cell_id, None) not in kept:
                problems.append(f"{cell_id} block {index}: neither generated nor kept in {SOLUTIONS_FILE}")
        for index in reversed(range(len(blocks))):  # from the end, so earlier blocks keep their lines
            entry = declared.get((cell_id, index))
            if entry is not None:
                lines[blocks[index].start : blocks[index].stop] = _block_text(entry, blocks[index])
        cell["source"] = "\n".join(lines).splitlines(keepends=True)
    return notebook, problems


def notebook_bytes(notebook: dict[str, Any]) -> bytes:
    """A notebook as the masters are stored: one-space indent, keys in their order, UTF-8, final newline."""
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _diff(old: dict[str, Any], new: dict[str, Any], name: str) -> list[str]:
    """A unified diff per cell whose source differs."""
    report: list[str] = []
    for before, after in zip(old["cells"], new["cells"], strict=True):
        if before["source"] != after["source"]:
            report += difflib.unified_diff(
                "".join(before["source"]).splitlines(),
                "".join(after["source"]).splitlines(),
                f"{name} {before.get('id')} (committed)",
                f"{name} {before.get('id')} (from the reference)",
                lineterm="",
            )
    return report


def _display(path: Path) -> str:
    """A path relative to the repository where it lies inside it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def check_or_write(folder: Path, write: bool) -> list[str]:
    """Compare (or rewrite) one assignment's master with the blocks generated from the reference.

    Args:
        folder: an assignment folder with a `solutions.yml`.
        write: rewrite the master where it differs.

    Returns:
        What is wrong: declaration problems, and (when not writing) the diff of stale blocks.
    """
    solutions = load_solutions(folder)
    current = json.loads(solutions.notebook.read_text(encoding="utf-8"))
    try:
        generated, declaration = regenerate(current, solutions)
    except SolutionSourceError as error:
        return [f"{folder.name}: {error}"]
    problems = [f"{folder.name}: {problem}" for problem in declaration]
    if generated != current:
        if write:
            solutions.notebook.write_bytes(notebook_bytes(generated))
        else:
            name = _display(solutions.notebook)
            problems += [f"{name} is stale (python -m assignments.solution_cells --write):"]
            problems += _diff(current, generated, name)
    return problems


def main(argv: list[str] | None = None) -> int:
    """Check or rewrite the solution blocks of every assignment's master that declares them."""
    parser = argparse.ArgumentParser(
        prog="python -m assignments.solution_cells",
        description="Generate the masters' solution blocks from the reference.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 and print what differs if a block is stale")
    mode.add_argument("--write", action="store_true", help="rewrite stale blocks from the reference")
    args = parser.parse_args(argv)
    problems: list[str] = []
    for folder in sorted(p.parent for p in ASSIGNMENTS.glob(f"*/{SOLUTIONS_FILE}")):
        problems += check_or_write(folder, write=args.write)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
