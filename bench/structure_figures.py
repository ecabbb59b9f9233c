"""Structure figures of the grader: import loops, assignment look-ups, engine files naming Part 2, lines.

Usage: python bench/structure_figures.py [--at REV]   (--at: the figures of another commit, read
from a detached worktree of it, with this checkout's definitions of every figure)
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
from import_graph import imported_modules  # noqa: E402
from worktree import detached_worktree  # noqa: E402

# reference/ held the trusted solutions until they moved into their assignments' folders (an older
# commit read with --at still counts it).
PACKAGES = ("autograder", "assignments", "reference")
# Words that name an assignment's own concepts; the engine (autograder/) should not need them.
# ("en" is left out: it is also the English catalogue's language code; ".pth" too: it is also the
# suffix of the path files Python's `site` reads, and Part 2's weights files are named with ".pt" as well.)
ASSIGNMENT_WORDS = re.compile(r"checkpoint|bleu|\"de\"|<sos>|<eos>|sos_id|eos_id|mtkit|multi30k|\.pt\b", re.IGNORECASE)
# Another thing of the same name: Jupyter's autosave folder.
NOT_ASSIGNMENT_WORDS = re.compile(r"\.ipynb_checkpoints")


def module_name(path: Path, root: Path) -> str:
    """Dotted module name of a file below a checkout.

    Args:
        path: a .py file below `root`.
        root: the checkout.

    Returns:
        Its dotted name (a package's `__init__` stands for the package).
    """
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def code_text(path: Path) -> str:
    """A file's code without its comments and docstrings (its names, strings and numbers).

    Args:
        path: a .py file.

    Returns:
        The remaining tokens' text, one per line.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    }
    # comments are not in the tree; every name and constant outside the docstrings is
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings and isinstance(node.value, str):
            parts.append(repr(node.value) if node.value in ("de", "en") else node.value)
        elif isinstance(node, ast.Name):
            parts.append(node.id)
        elif isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif isinstance(node, ast.alias):
            parts.append(node.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            parts.append(node.module)
        elif isinstance(node, ast.arg):
            parts.append(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            parts.append(node.name)
    return "\n".join(parts).replace("'", '"')


def names_assignment(text: str) -> bool:
    """Whether a text names one of the assignment words (other things of the same name left out)."""
    return bool(ASSIGNMENT_WORDS.search(NOT_ASSIGNMENT_WORDS.sub("", text)))


def is_reference(module: str) -> bool:
    """Whether a dotted module name is a trusted solution's: reference.* or assignments.<name>.reference.*."""
    return "reference" in module.split(".")


def source_files(root: Path) -> list[Path]:
    """Args: root, a checkout. Returns: every Python file of its three packages (no tests, no vendored copies)."""
    return sorted(p for pkg in PACKAGES for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def imports_of(path: Path, modules: set[str], root: Path) -> set[str]:
    """The project modules one file imports (function-level imports included).

    Args:
        path: the file.
        modules: every project module's dotted name.
        root: the checkout the file is in.

    Returns:
        The imported project modules.
    """
    here = module_name(path, root)
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


def figures(root: Path) -> dict[str, object]:
    """The figures of one checkout.

    Args:
        root: the checkout.

    Returns:
        The figures by name (what main prints).
    """
    files = source_files(root)
    modules = {module_name(p, root) for p in files}
    # Edges to a package's __init__ only count when the file imports the package itself.
    graph = {module_name(p, root): imports_of(p, modules, root) for p in files}
    loops = strongly_connected(graph)
    lookups = sum(len(re.findall(r"(?<!def )\bassignment_of\(", p.read_text(encoding="utf-8"))) for p in files)
    engine = [p for p in files if p.parts[len(root.parts)] == "autograder"]
    # any mention (comments and docstrings included), and the code alone (names and strings)
    engine_naming = sorted(str(p.relative_to(root)) for p in engine if names_assignment(p.read_text(encoding="utf-8")))
    engine_code_naming = sorted(str(p.relative_to(root)) for p in engine if names_assignment(code_text(p)))
    lines = {
        pkg: sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files if p.parts[len(root.parts)] == pkg)
        for pkg in PACKAGES
    }
    reference_imports_grader = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if is_reference(name)
        for target in targets
        if target.startswith(("autograder", "assignments")) and not is_reference(target)
    )
    return {
        "import_loops": len(loops),
        "modules_in_loops": sum(len(loop) for loop in loops),
        "loops": loops,
        "assignment_of_calls": lookups,
        "engine_files_naming_assignment": len(engine_naming),
        "engine_files": engine_naming,
        "engine_files_whose_code_names_assignment": len(engine_code_naming),
        "engine_code_files": engine_code_naming,
        "reference_imports_grader": reference_imports_grader,
        "python_lines": {**lines, "total": sum(lines.values())},
    }


def main() -> None:
    """Print the figures of this checkout, or of the commit named by --at, as JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--at", metavar="REV", help="another commit (a detached worktree of it is read)")
    args = parser.parse_args()
    if args.at is None:
        print(json.dumps(figures(ROOT), indent=1))
        return
    with detached_worktree(args.at) as other:
        print(json.dumps({"at": args.at, **figures(other)}, indent=1))


if __name__ == "__main__":
    main()
