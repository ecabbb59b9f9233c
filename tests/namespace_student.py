"""A test-only answerer of worker requests over a namespace where a trusted fixture's source ran."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from unittest import mock

from autograder.checks.inprocess import InProcessStudent


class NamespaceStudent(InProcessStudent):
    """An answerer over a namespace where trusted source (a test fixture) was executed."""

    def __init__(self, source: str, grader_globals: Mapping[str, Any], helpers: Mapping[str, Any]) -> None:
        """Run the source in a fresh namespace, then set the grader's globals over it (they win).

        Args:
            source: trusted Python source (never a submission: it runs in this process).
            grader_globals: the names the grader provides.
            helpers: the grader helpers, by name.
        """
        super().__init__(grader_globals, helpers)
        self.namespace: dict[str, Any] = {"__name__": "submission"}
        exec(compile(source, "<fixture>", "exec"), self.namespace)  # trusted code only
        self.namespace.update(grader_globals)

    def set_globals(self, values: Mapping[str, Any] | None) -> None:
        """Set grader globals where the source's functions read them (their module namespace)."""
        super().set_globals(values)
        self.namespace.update(values or {})

    def has(self, name: str) -> bool:
        """Whether the source defines the name."""
        return name in self.namespace

    def function(self, name: str) -> Callable[..., Any]:
        """The source's global of that name."""
        found: Callable[..., Any] = self.namespace[name]
        return found

    @contextlib.contextmanager
    def building(self, cls: str, substitute: Mapping[str, str]) -> Iterator[Callable[..., Any]]:
        """The source's class, with helpers bound to the substituted names meanwhile (as the worker does)."""
        with mock.patch.dict(self.namespace, {name: self.helpers[helper] for name, helper in substitute.items()}):
            yield self.namespace[cls]
