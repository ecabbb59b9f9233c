"""Structure figures of the grader: import loops, assignment look-ups, engine files naming Part 2, lines."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from import_graph import imported_modules  # noqa: E402

PACKAGES = ("autograder", "assignments", "reference")
# Words that name an assignment's own concepts; the engine (autograder/) should not need them.
# ("en" is left out: it is also the English catalogue's language code.)
ASSIGNMENT_WORDS = re.compile(
    r"checkpoint|bleu|\"de\"|<sos>|<eos>|sos_id|eos_id|mtkit|multi30k|\.pth?\b", re.IGNORECASE
)


def module_name(path: Path) -> str:
    """Dotted module name of a file below ROOT.

    Args:
        path: a .py file below ROOT.

    Returns:
        Its dotted name (a package's `__init__` stands for the package).
    """
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> list[Path]:
    """Every Python file of the three packages, tests and vendored copies excluded."""
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules one file imports (function-level imports included).

    Args:
        path: the file.
        modules: every project module's dotted name.

    Returns:
        The imported project modules.
    """
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    # the same parser as the import-direction tests (tests/import_graph.py), so figure and test agree
    for name in imported_modules(path.read_text(encoding="utf-8"), package):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != here:
            found.add(name)
    return found


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (the import loops)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    sys.setrecursionlimit(10000)

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return loops


def main() -> None:
    """Print the figures as JSON."""
    files = source_files()
    modules = {module_name(p) for p in files}
    # Edges to a package's __init__ only count when the file imports the package itself.
    graph = {module_name(p): imports_of(p, modules) for p in files}
    loops = strongly_connected(graph)
    lookups = sum(len(re.findall(r"(?<!def )\bassignment_of\(", p.read_text(encoding="utf-8"))) for p in files)
    engine_naming = sorted(
        str(p.relative_to(ROOT))
        for p in files
        if p.parts[len(ROOT.parts)] == "autograder" and ASSIGNMENT_WORDS.search(p.read_text(encoding="utf-8"))
    )
    lines = {
        pkg: sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files if p.parts[len(ROOT.parts)] == pkg)
        for pkg in PACKAGES
    }
    reference_imports_grader = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.startswith("reference")
        for target in targets
        if target.startswith(("autograder", "assignments"))
    )
    print(
        json.dumps(
            {
                "import_loops": len(loops),
                "modules_in_loops": sum(len(loop) for loop in loops),
                "loops": loops,
                "assignment_of_calls": lookups,
                "engine_files_naming_assignment": len(engine_naming),
                "engine_files": engine_naming,
                "reference_imports_grader": reference_imports_grader,
                "python_lines": {**lines, "total": sum(lines.values())},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
