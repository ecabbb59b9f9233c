"""`grader.check` in the course's language: Otter's public checks, their results worded from the course's catalogue."""

# Otter words a question's result itself, in English ("q1 results:", "❌ Test case failed",
# "Error at line 19 in test q1:"), in both its text and its HTML form, and has no setting for it.
# The student notebook's setup cell makes its `grader` with `Notebook` below instead of
# `otter.Notebook`: the checks are Otter's own (the same test files, `Checker`, .OTTER_LOG), only
# the returned result is shown in other words. The words are the catalogue's
# (autograder/reports/messages/<lang>.yml, keys `otter.check.*`), which the template build writes
# beside the public tests as `WORDS_FILE`; the student has no copy of the grader. Without that file
# (an older tests/ folder) the results are Otter's, unchanged. The Otter plugin words the graded
# questions with the same `question_summary` (autograder/otter_bridge.py).

from __future__ import annotations

import html
import inspect
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import otter

WORDS_FILE = "check_messages.json"
# The keys a words mapping holds (catalogue key: otter.check.<key>).
KEYS = ("results", "all_passed", "passed", "failed", "hint", "where", "where_code", "raised")
# Otter's text for a failing exception-format case: its first line, then where the test stopped
# (one source line of the test, indented by two spaces) and the exception.
_OTTER_FAILED = "❌ Test case failed"
_OTTER_ERROR = re.compile(r"Error at line (\d+) in test (.*?):\n  ([^\n]*)\n(\w+): (.*)", re.DOTALL)


def _points(value: float) -> str:
    return f"{value:g}"


def case_details(message: str, words: Mapping[str, str]) -> list[str]:
    """A failing case's own message in `words`: Otter's "Error at line ..." frame reworded.

    Args:
        message: the case result's message (Otter's, or a message already in the course's words).
        words: the catalogue's `otter.check.*` templates, keyed by `KEYS`.

    Returns:
        The lines to show under the case: what went wrong, then where the test stopped. A message
        not in Otter's frame is returned as it is.
    """
    text = message.replace(_OTTER_FAILED, "", 1).strip() if message.startswith(_OTTER_FAILED) else message.strip()
    found = _OTTER_ERROR.fullmatch(text)
    if found is None:
        return text.splitlines()
    line, test, code, kind, said = found.groups()
    # An assertion's message is the test's hint to the student: shown as it is, with the test's line
    # number. Any other exception is Python's text, quoted inside the catalogue's sentence, and the
    # test's line that stopped is shown as code.
    if kind == "AssertionError" and said.strip():
        return [*said.splitlines(), words["where"].format(test=test, line=line)]
    what = words["raised"].format(error=f"`{kind}: {said}`" if said.strip() else f"`{kind}`")
    return [*what.splitlines(), words["where_code"].format(test=test, line=line, code=f"`{code.strip()}`")]


def question_summary(test_file: Any, words: Mapping[str, str]) -> str:
    """The plain-text result of one question (an Otter `TestFile` after it ran), in `words`.

    Args:
        test_file: Otter's test file, its `test_case_results` filled.
        words: the catalogue's `otter.check.*` templates, keyed by `KEYS`.

    Returns:
        A title line with the points, then one line per case, its failure's hint and details indented.
    """
    fields = {"name": test_file.name, "points": _points(test_file.score), "possible": _points(test_file.possible)}
    if test_file.passed_all:
        return words["all_passed"].format(**fields)
    lines = [words["results"].format(**fields)]
    for result in test_file.test_case_results:
        case = result.test_case
        lines.append(f"    {case.name}: {words['passed'] if result.passed else words['failed']}")
        if result.passed:
            continue
        details = [words["hint"].format(message=case.failure_message)] if case.failure_message else []
        details += case_details(result.message or "", words)
        lines += [f"        {detail}" if detail else "" for detail in details]
    return "\n".join(lines)


def read_words(tests_dir: str | Path) -> dict[str, str] | None:
    """The words the template build wrote beside the public tests; None when there are none."""
    path = Path(tests_dir) / WORDS_FILE
    if not path.is_file():
        return None
    words = json.loads(path.read_text(encoding="utf-8"))
    return words if all(isinstance(words.get(key), str) for key in KEYS) else None


class CheckResult:
    """Otter's result of `grader.check` (every attribute its own), shown in the course's words."""

    def __init__(self, test_file: Any, words: Mapping[str, str]) -> None:
        self._test_file = test_file
        self._words = words

    def __getattr__(self, name: str) -> Any:
        return getattr(self._test_file, name)

    def summary(self, public_only: bool = False) -> str:
        """The result as text (every case of a public check is public)."""
        return question_summary(self._test_file, self._words)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        title, _, rest = self.summary().partition("\n")
        color = "green" if self._test_file.passed_all else "red"
        body = f"<pre>{html.escape(rest)}</pre>" if rest else ""
        return f"<p><strong style='color: {color};'>{html.escape(title)}</strong></p>{body}"


class Notebook(otter.Notebook):  # type: ignore[misc]  # Otter has no type information
    """Otter's `Notebook`, whose `check` results are worded from the course's catalogue."""

    def check(self, question: str, global_env: dict[str, Any] | None = None) -> Any:
        """Run the public checks of `question` as Otter does, on the calling cell's globals by default.

        Args:
            question: the question's name, e.g. "q1".
            global_env: the globals to check (None: the caller's, as Otter's own `check`).

        Returns:
            Otter's result, shown in the course's words when the tests folder has them.
        """
        if global_env is None:
            caller = inspect.currentframe()
            global_env = caller.f_back.f_globals if caller is not None and caller.f_back is not None else {}
        result = super().check(question, global_env)
        words = read_words(self._tests_dir)
        return result if words is None else CheckResult(result, words)
