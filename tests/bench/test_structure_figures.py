"""bench/structure_figures.py: each figure on a tiny checkout, and --at reading another commit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench_scripts import load_bench

REPO = Path(__file__).resolve().parents[2]
CHECKOUT = REPO / "tests" / "fixtures" / "structure"


def test_each_figure_of_a_tiny_checkout() -> None:
    figures = load_bench("structure_figures").figures(CHECKOUT)
    assert figures["loops"] == [["autograder.back", "autograder.front"]]
    assert figures["assignment_of_calls"] == 1  # the call, not the definition
    assert figures["engine_files"] == ["autograder/back.py", "autograder/front.py"]
    assert figures["engine_code_files"] == ["autograder/back.py"]  # front names mtkit in a comment only
    assert figures["reference_imports_grader"] == ["assignments.part.reference.model -> autograder.back"]
    lines = {
        folder: sum(len(p.read_text().splitlines()) for p in (CHECKOUT / folder).rglob("*.py"))
        for folder in ("autograder", "assignments", "reference")
    }
    assert figures["python_lines"] == {**lines, "total": sum(lines.values())}


def test_at_reads_the_named_commit() -> None:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "structure_figures.py"), "--at", head.stdout.strip()],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["at"] == head.stdout.strip()
    assert figures["python_lines"]["total"] > 0 and figures["import_loops"] == 0
