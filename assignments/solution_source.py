"""Solution code read from the trusted reference's source: some statements of a definition, untyped."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# A mypy comment of the typed reference; notebook code has no use for it.
_TYPE_IGNORE = re.compile(r"\s+# type: ignore\[[^\]]*\]$")


class SolutionSourceError(ValueError):
    """The named definition or statements are not in the reference, or cannot be written untyped."""


def _definition(tree: ast.Module, qualname: str) -> ast.FunctionDef:
    """The function or method `name` / `Class.name` defined at the top of a module."""
    scope: list[ast.stmt] = tree.body
    *classes, name = qualname.split(".")
    for class_name in classes:
        found = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == class_name]
        if not found:
            raise SolutionSourceError(f"no class {class_name!r} for {qualname!r}")
        scope = found[0].body
    functions = [n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name]
    if not functions:
        raise SolutionSourceError(f"no function {qualname!r}")
    return functions[-1]  # the last definition wins, as when the module runs


def _body(function: ast.FunctionDef) -> list[ast.stmt]:
    """The function's statements without its docstring."""
    return function.body[1:] if ast.get_docstring(function) is not None else function.body


def _parse_slice(select: str) -> slice:
    """`"1:"`, `":2"`, `"2:3"` or `":"` as a slice of statement indices."""
    start, _, stop = select.partition(":")
    return slice(int(start) if start else None, int(stop) if stop else None)


def _untyped(text: str, where: str) -> str:
    """`name: T = value` written `name = value`, and `# type: ignore[...]` comments dropped.

    Args:
        text: dedented statements.
        where: what they are, for the error message.

    Returns:
        The same statements without annotations, line for line.

    Raises:
        SolutionSourceError: for an annotation that has no untyped spelling here (a bare
            `name: T`, an annotation over several lines, or a typed nested function).
    """
    lines = text.split("\n")
    cuts: list[tuple[int, int, int]] = []  # (line index, start column, end column) to delete
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.AnnAssign):
            if node.value is None or node.target.end_lineno != node.annotation.end_lineno:
                raise SolutionSourceError(f"{where}: cannot write `{ast.unparse(node)}` without its type")
            row, start, end = node.target.end_lineno, node.target.end_col_offset, node.annotation.end_col_offset
            assert row is not None and start is not None and end is not None  # set by ast.parse
            cuts.append((row - 1, start, end))
        elif (isinstance(node, ast.arg) and node.annotation is not None) or (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None
        ):
            raise SolutionSourceError(f"{where}: typed nested functions are not supported")
    for index, start, end in sorted(cuts, reverse=True):  # right to left keeps the columns valid
        line = lines[index].encode()  # ast columns count UTF-8 bytes
        lines[index] = (line[:start] + line[end:]).decode()
    return "\n".join(_TYPE_IGNORE.sub("", line) for line in lines)


def reference_statements(path: str | Path, qualname: str, select: str = ":") -> str:
    """Some statements of a reference definition, as notebook code.

    Args:
        path: the reference module, relative to the repository (or absolute).
        qualname: `function` or `Class.method`.
        select: a Python slice of the body's statements (docstring not counted), e.g. `"1:"` to skip
            the `super().__init__()` call.

    Returns:
        The statements' source lines (comments and blank lines between them included), dedented, with
        annotations and `# type: ignore[...]` comments removed; no trailing newline.

    Raises:
        SolutionSourceError: if the definition or the statements are missing or cannot be untyped.
    """
    file = Path(path) if Path(path).is_absolute() else REPO / path
    source = file.read_text(encoding="utf-8")
    chosen = _body(_definition(ast.parse(source), qualname))[_parse_slice(select)]
    where = f"{file.name}: {qualname}[{select}]"
    if not chosen:
        raise SolutionSourceError(f"{where} selects no statement")
    lines = source.splitlines()[chosen[0].lineno - 1 : chosen[-1].end_lineno]
    indent = chosen[0].col_offset
    if any(line.strip() and not line[:indent].isspace() for line in lines):
        raise SolutionSourceError(f"{where}: the statements are not one block")
    return _untyped("\n".join(line[indent:] for line in lines), where)
