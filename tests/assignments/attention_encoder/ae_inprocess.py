"""A trusted in-process stand-in for the worker, running test fixture code (never student code).

It serves the worker's request interface (`has`, `call`, `new`, `params`, `modules`,
`load_state`, `run`) from a namespace where a fixture's source was executed, with Part 1's
grader helpers in their own namespace and `substitute` rebinding names while constructing, as the
sandboxed worker does (autograder.checks.inprocess.NamespaceStudent). Fast enough to run every
fixture in the default suite; one test runs the real sandboxed worker as well.
"""

from __future__ import annotations

from typing import Any

from namespace_student import NamespaceStudent  # the tests' helper (tests/namespace_student.py)

from assignments.attention_encoder.checks.helpers import helpers_namespace


class InProcessStudent(NamespaceStudent):
    """The worker's request interface over a namespace holding fixture code, with Part 1's helpers."""

    def __init__(self, source: str, grader_globals: dict[str, Any]) -> None:
        super().__init__(source, grader_globals, helpers_namespace())
