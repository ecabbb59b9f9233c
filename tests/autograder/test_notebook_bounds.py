"""Hostile notebooks cost the grader's process a bounded, linear amount of work (issue 38, break 3).

The crafted notebooks are generated here, not committed: `crafted_notebook` is also what the
before/after CPU measurement of the issue used (`python tests/autograder/test_notebook_bounds.py`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from autograder.i18n import use_language
from autograder.notebook import MAX_CODE_CELLS, MAX_CODE_CHARS, MAX_PROBLEMS, load_submission
from autograder.notebook_parse import MAX_DEPTH, MAX_LINE_CHARS, PARSE_BUDGET_CHARS

# The line of the attack: an unclosed quote and bracket that once made every later magic line
# re-tokenize the whole cell (3,000 lines: 51 s of the grader's CPU).
MAGIC_LINE = '!echo "(\n'


def notebook(*cells: str) -> str:
    """A v4 notebook with these code cells."""
    code: list[dict[str, object]] = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells
    ]
    return json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def crafted_notebook(size_bytes: int, tail: str = "def after():\n    return 1\n") -> str:
    """One cell of `!echo "(` lines (then `tail`), as close to `size_bytes` of JSON as lines make it."""
    line_bytes = len(json.dumps(MAGIC_LINE)) + 2  # the quoted line and its ", " in the source list
    lines = [MAGIC_LINE] * max(1, (size_bytes - 200) // line_bytes)
    cell: dict[str, object] = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    cell["source"] = [*lines, tail]
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def cpu_load(path: Path):
    started = time.process_time()
    loaded = load_submission(path, max_mb=20)
    return loaded, time.process_time() - started


def defined(loaded) -> set[str]:
    return {name for statement in loaded.statements for name in statement.defines}


@pytest.mark.parametrize("size_bytes", [317 * 1024, 1024 * 1024])
def test_a_crafted_magic_line_notebook_loads_in_linear_time(tmp_path: Path, size_bytes: int) -> None:
    path = tmp_path / "crafted.ipynb"
    path.write_text(crafted_notebook(size_bytes))
    assert abs(path.stat().st_size - size_bytes) < 100
    loaded, cpu = cpu_load(path)
    # Before: ~2,600 and ~28,000 CPU-seconds (quadratic); now well under a second on an idle core.
    assert cpu < 15, cpu
    assert defined(loaded) == {"after"} and loaded.problems == []  # every magic line blanked, the rest read


def test_work_grows_linearly_with_the_number_of_magic_lines(tmp_path: Path) -> None:
    small, large = tmp_path / "small.ipynb", tmp_path / "large.ipynb"
    small.write_text(crafted_notebook(64 * 1024))
    large.write_text(crafted_notebook(512 * 1024))
    cpu_load(small)  # warm caches (catalogue, regex) before timing
    small_cpu = min(cpu_load(small)[1] for _ in range(3))
    large_cpu = min(cpu_load(large)[1] for _ in range(3))
    # 8x the lines: linear costs ~8x, the old quadratic pass ~64x.
    assert large_cpu < 24 * max(small_cpu, 0.005), (small_cpu, large_cpu)


def test_magic_lines_with_quotes_still_leave_the_code_around_them_intact(tmp_path: Path) -> None:
    cell = '!echo "(\nvalue = (7\n% 3)\n%time "\ndef f():\n    !ls "[\n    return 2\n'
    path = tmp_path / "mixed.ipynb"
    path.write_text(notebook(cell))
    loaded = load_submission(path)
    assert defined(loaded) == {"value", "f"} and loaded.problems == []
    assert [s.code for s in loaded.statements] == ["value = (7\n% 3)", "def f():\n    pass\n    return 2"]


@pytest.mark.parametrize("terms", [1_200, 100_000])
def test_a_deeply_nested_statement_is_refused_with_the_cap_not_a_grader_error(tmp_path: Path, terms: int) -> None:
    path = tmp_path / "deep.ipynb"
    deep = "x = (" + "+\n".join(["1"] * terms) + ")\n"  # lines under the line cap
    path.write_text(notebook("import math\n", deep, "def g():\n    return 3\n"))
    loaded = load_submission(path)  # RecursionError in bound_names (1,200) or in ast.parse (100,000) before
    assert defined(loaded) == {"math", "g"}
    [problem] = loaded.problems
    assert problem.cell == 2 and f"({MAX_DEPTH} levels)" in problem.message


def test_a_line_over_the_cap_refuses_its_cell_only(tmp_path: Path) -> None:
    path = tmp_path / "long.ipynb"
    path.write_text(notebook("A = 1\n", "B = '" + "x" * MAX_LINE_CHARS + "'\n", "C = 3\n"))
    loaded = load_submission(path)
    assert defined(loaded) == {"A", "C"}
    [problem] = loaded.problems
    assert problem.cell == 2 and f"{MAX_LINE_CHARS:,} characters" in problem.message


@pytest.mark.parametrize(
    "cells", [["x = 1\n"] * (MAX_CODE_CELLS + 1), ["x = 1\n" * (MAX_CODE_CHARS // 6 + 1)]], ids=["cells", "characters"]
)
def test_more_code_than_the_caps_is_refused_whole_with_both_caps_named(tmp_path: Path, cells: list[str]) -> None:
    path = tmp_path / "big.ipynb"
    path.write_text(notebook(*cells))
    with use_language("ko"):
        loaded, cpu = cpu_load(path)
    assert not loaded.readable and loaded.statements == []
    message = loaded.problems[0].message
    assert f"코드 셀 {MAX_CODE_CELLS:,}개" in message and f"코드 {MAX_CODE_CHARS:,}자" in message, message
    assert cpu < 5, cpu


def test_a_spent_parse_budget_is_said_first_and_what_was_read_before_it_is_kept(tmp_path: Path) -> None:
    # 60 empty blocks: 50 whole-cell re-parses (repairs) per cell, then salvage, until the budget is spent.
    stubs = "".join(f"def f{i}():\n    # todo\n" for i in range(60)) + "y = 1\n" * 600
    path = tmp_path / "stubs.ipynb"
    path.write_text(notebook("KEPT = 1\n", *[stubs] * 120))
    loaded, cpu = cpu_load(path)
    assert f"({PARSE_BUDGET_CHARS:,} characters parsed)" in loaded.problems[0].message
    assert "KEPT" in defined(loaded)
    assert loaded.problems[0].cell is not None and loaded.problems[0].cell < 120  # the later cells are not read
    assert cpu < 15, cpu


def test_at_most_max_problems_are_listed(tmp_path: Path) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_text(notebook("x)\n" * 5_000))  # one unparseable statement per line
    loaded = load_submission(path)
    assert len(loaded.problems) == MAX_PROBLEMS + 1
    assert f"{5_000 - MAX_PROBLEMS} more problems" in loaded.problems[-1].message


def test_a_png_renamed_ipynb_gets_the_friendly_korean_message(tmp_path: Path) -> None:
    png = tmp_path / "hw.ipynb"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with use_language("ko"):
        loaded = load_submission(png)
    [problem] = loaded.problems
    assert "UTF-8 텍스트가 아니어서" in problem.message and ".ipynb 파일 자체를 올리세요" in problem.message
    assert "codec" not in problem.message and "0x89" not in problem.message


if __name__ == "__main__":  # the measurement: CPU seconds of load_submission for the crafted notebooks
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    for size in (317 * 1024, 1024 * 1024):
        target = folder / f"crafted-{size // 1024}k.ipynb"
        target.write_text(crafted_notebook(size))
        _, seconds = cpu_load(target)
        print(f"{target.stat().st_size:,} bytes: {seconds:.2f} s CPU")
