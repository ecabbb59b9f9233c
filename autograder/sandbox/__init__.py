"""Sandboxed execution of student code: a worker process answering tensor/JSON requests (see README.md here)."""

from autograder.worker_runtime.protocol import Global, Ref, TorchObject

from .client import Statement, Worker
from .errors import BudgetSpent, StudentError, WorkerFailure
from .limits import Limits
from .plan import IsolationUnavailable, choose_isolation

__all__ = [
    "BudgetSpent",
    "Global",
    "IsolationUnavailable",
    "Limits",
    "Ref",
    "Statement",
    "StudentError",
    "TorchObject",
    "Worker",
    "WorkerFailure",
    "choose_isolation",
]
