"""Sandboxed execution of student code: a worker process answering tensor/JSON requests (see README.md here)."""
from autograder.worker_runtime.protocol import Global, Ref, TorchObject

from .client import Statement, Worker
from .errors import StudentError, WorkerFailure
from .limits import Limits

__all__ = ["Global", "Limits", "Ref", "Statement", "StudentError", "TorchObject", "Worker", "WorkerFailure"]
