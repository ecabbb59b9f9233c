"""What a Python source imports, from its syntax tree (the layering and import-direction tests)."""

from __future__ import annotations

import ast


def imported_modules(source: str, package: str) -> set[str]:
    """Every module a source imports, anywhere in it (function-level imports too), as absolute names.

    Args:
        source: Python source text.
        package: the package the source's module lives in (anchors relative imports).

    Returns:
        Dotted module names; `from X import y` yields both X and X.y (y may be a submodule).
    """
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `.` is the package itself, each further dot one level up
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names
