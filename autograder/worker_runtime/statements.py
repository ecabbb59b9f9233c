"""Running student statements one top-level node at a time, and describing student exceptions by student line."""

from __future__ import annotations
import __future__

import ast
import linecache
import traceback
import types
from collections.abc import Callable, Iterable
from typing import Any

MAX_MESSAGE_CHARS = 2000
_MEMORY_MARKERS = ("can't allocate memory", "not enough memory", "out of memory")


def _safe_str(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # a student __str__ may itself raise
        text = "<the exception's message could not be shown>"
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + " [...]"


def is_memory_error(exc: BaseException) -> bool:
    """Args: an exception. Returns: whether it reports running out of memory."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, RuntimeError):
        return any(marker in _safe_str(exc) for marker in _MEMORY_MARKERS)
    return False


def describe_exception(exc: BaseException, student_files: Iterable[str]) -> dict[str, str]:
    """Args: exception, labels of student sources. Returns: exc_type, message and the innermost student line."""
    files = set(student_files)
    where = ""
    if isinstance(exc, SyntaxError) and exc.filename in files:
        where = f"{exc.filename}, line {exc.lineno}"
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        if code.co_filename in files:
            where = f"{code.co_filename}, line {lineno}"
            if code.co_name != "<module>":
                where += f", in {code.co_name}"
    return {"exc_type": type(exc).__name__, "message": _safe_str(exc), "where": where}


class StatementRunner:
    """Executes (label, first line, code) items in a namespace, each top-level node on its own."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        """Args: the student module's namespace."""
        self.namespace = namespace
        self.files: set[str] = set()
        self._lines: dict[str, dict[int, str]] = {}
        self._future_flags = 0

    def run(
        self, statements: list[Any], skip: set[tuple[int, int]], notify: Callable[[tuple[int, int], int], None]
    ) -> dict[str, Any]:
        """Run every statement node not in `skip`; one failing node loses only itself.

        Args:
            statements: [label, first line number, code] items.
            skip: (statement index, node index) pairs to leave out (they killed an earlier worker).
            notify: called with (statement index, node index) and the node's line before it runs.
        Returns:
            the load report: functions, classes, names, errors.
        """
        errors: list[dict[str, Any]] = []
        for index, item in enumerate(statements):
            label, first_line, code = str(item[0]), int(item[1]), str(item[2])
            self._remember(label, first_line, code)
            try:
                tree = ast.parse(code, filename=label)
                ast.increment_lineno(tree, first_line - 1)
            except BaseException as exc:  # SyntaxError, or RecursionError/MemoryError on absurd input
                if isinstance(exc, SyntaxError) and exc.lineno is not None:
                    exc.lineno += first_line - 1
                errors.append(self._error(label, first_line, exc))
                continue
            for position, node in enumerate(tree.body):
                if (index, position) in skip:
                    continue
                notify((index, position), node.lineno)
                try:
                    self._exec_node(label, node)
                except BaseException as exc:  # SystemExit/KeyboardInterrupt are student errors too
                    errors.append(self._error(label, node.lineno, exc))
                    del exc
        return self.report(errors)

    def _exec_node(self, label: str, node: ast.stmt) -> None:
        module = ast.Module(body=[node], type_ignores=[])
        # dont_inherit: the runtime's own `from __future__` imports must not change student code
        code = compile(module, label, "exec", flags=self._future_flags, dont_inherit=True)
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:  # later nodes keep the future features, as in a notebook
                feature = getattr(__future__, alias.name, None)
                self._future_flags |= getattr(feature, "compiler_flag", 0)
        exec(code, self.namespace)

    def _remember(self, label: str, first_line: int, code: str) -> None:
        """Register the source with linecache so tracebacks and inspect can show student lines."""
        self.files.add(label)
        lines = self._lines.setdefault(label, {})
        for offset, text in enumerate(code.splitlines()):
            lines[first_line + offset] = text + "\n"
        last = max(lines, default=0)
        numbered = [lines.get(number, "\n") for number in range(1, last + 1)]
        linecache.cache[label] = (sum(map(len, numbered)), None, numbered, label)

    def _error(self, label: str, line: int, exc: BaseException) -> dict[str, Any]:
        info = describe_exception(exc, self.files)
        return {
            "label": label,
            "line": line,
            "memory": is_memory_error(exc),
            **info,
            "where": info["where"] or f"{label}, line {line}",
        }

    def report(self, errors: list[dict[str, Any]]) -> dict[str, Any]:
        """Args: collected errors. Returns: what the namespace now defines, and the errors."""
        functions, classes, names = [], [], []
        for name, value in list(self.namespace.items()):
            if not isinstance(name, str) or name.startswith("__"):
                continue
            names.append(str(name))
            if isinstance(value, types.FunctionType) and value.__code__.co_filename in self.files:
                functions.append(str(name))
            elif isinstance(value, type) and type.__getattribute__(value, "__module__") == "submission":
                classes.append(str(name))
        return {"functions": functions, "classes": classes, "names": names, "errors": errors}
