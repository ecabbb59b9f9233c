"""Exceptions the sandbox client raises: the worker failed, or student code raised."""

from __future__ import annotations


class WorkerFailure(Exception):
    """The worker could not answer: timeout, memory, crash, exit, or a malformed reply.

    Attributes:
        reason: human-readable cause, e.g. "timed out after 10 s".
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BudgetSpent(WorkerFailure):
    """The submission's whole time budget (Worker deadline) ran out; nothing more is run for it."""


class StudentError(Exception):
    """Student code raised an exception (or returned something unusable).

    Attributes:
        exc_type: the exception's class name, e.g. "RuntimeError".
        message: its message (truncated).
        where: innermost student line, e.g. "cell 7, line 12, in forward"; "" if none.
    """

    def __init__(self, exc_type: str, message: str, where: str = "") -> None:
        super().__init__(f"{exc_type}: {message}" + (f" ({where})" if where else ""))
        self.exc_type = exc_type
        self.message = message
        self.where = where
