"""Trusted-side client of the sandboxed worker: start-up with statement recovery, requests, replies, restarts."""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import torch

from autograder.i18n import student_line, t
from autograder.worker_runtime import library_calls
from autograder.worker_runtime.protocol import ProtocolError, Ref, ValueReader, ValueWriter, load_blob, pack_frame

from .errors import BudgetSpent, StudentError, WorkerFailure
from .limits import Limits
from .process import ExchangeError, OutputLog, WorkerProcess
from .replies import expect_modules, expect_params, expect_state, text
from .startup import BUDGET_REASON, Launcher, trusted_flatten

Statement = tuple[str, int, str]


class Worker:
    """A sandboxed worker holding one submission; a context manager. Calls are serialised by a lock."""

    def __init__(
        self,
        statements: Sequence[Statement] | str,
        limits: Limits | None = None,
        grader_globals: dict[str, Any] | None = None,
        extra_paths: Sequence[Path] = (),
        *,
        helpers_source: str = "",
        data_paths: Sequence[Path] = (),
        deadline: float | None = None,
        watch: Sequence[str] = (),
    ) -> None:
        """Start the worker and run the student statements in it.

        Args:
            statements: (label, first line, code) items, or one source string (label "submission").
            limits: resource limits; defaults to Limits().
            grader_globals: set in the student namespace before and after the statements run, and
                again (fresh copies) before every request; "device" strings become torch.device.
            extra_paths: directories copied into the sandbox and importable by their name (mtkit/).
            helpers_source: grader-written code run first in its own module (`grader_helpers`),
                apart from the student namespace; its classes can stand in for student ones (`new`).
            data_paths: directories made readable inside the sandbox at the same path.
            deadline: time.monotonic() value after which nothing more runs for this submission
                (loads, restarts and requests are cut there): BudgetSpent.
            watch: dotted names of library callables whose calls the worker records from before the
                statements run; the names recorded during requests are added to `library_calls`.
        """
        self.limits = limits or Limits()
        if isinstance(statements, str):
            statement_list = [["submission", 1, statements]]
        else:
            statement_list = [[str(label), int(line), str(code)] for label, line, code in statements]
        # a "device" given as a string becomes a torch.device, as in the notebook
        given = dict(grader_globals or {})
        self._baseline = {k: torch.device(v) if k == "device" and isinstance(v, str) else v for k, v in given.items()}
        self._output = OutputLog(self.limits.output_bytes)
        self._launcher = Launcher(
            self.limits, statement_list, helpers_source, extra_paths, data_paths, self._output, watch
        )
        self.library_calls: set[str] = set()  # only watched names count: the worker's events are not trusted
        self._finalizer = weakref.finalize(self, self._launcher.release)
        self._lock = threading.RLock()
        self._handles: set[int] = set()
        self._last_handle = 0
        self._request_ids = itertools.count(1)
        self._report: dict[str, Any] = {"functions": [], "classes": [], "names": [], "errors": []}
        self._broken: str | None = None
        self._closed = False
        self.deadline = deadline
        self.isolation: dict[str, Any] = {}
        self.start_seconds: list[float] = []
        try:
            self._start()
        except WorkerFailure as failure:
            self._broken = failure.reason

    # --- public API -------------------------------------------------------------------------
    def load_report(self) -> dict[str, Any]:
        """Returns: {"functions", "classes", "names": [str], "errors": [{label, line, exc_type,
        message, where, memory}], "failure": reason the worker cannot run, or None}."""
        return {**self._report, "failure": self._broken}

    def has(self, name: str) -> bool:
        """Args: a global name. Returns: whether the submission defines it.
        Raises: BudgetSpent once the deadline has passed (the load may not have finished)."""
        self._check_budget()
        return name in self._report["names"]

    def call(
        self,
        func: str,
        args: list[Any],
        *,
        kwargs: dict[str, Any] | None = None,
        set_globals: dict[str, Any] | None = None,
        grad_wrt: list[int] | None = None,
        grad_output: torch.Tensor | None = None,
        seed: int = 0,
        timeout_s: float | None = None,
    ) -> Any:
        """Call a student function (or "package.module:function" importable in the worker).

        Args:
            func: name; args/kwargs: values (tensors, scalars, containers, Ref, Global, TorchObject).
            set_globals: student globals for this request only.
            grad_wrt: indices of float tensor args to differentiate with respect to.
            grad_output: upstream gradient (default: ones) when grad_wrt is given.
            seed: torch/random/numpy seed set before the call. timeout_s: overrides limits.timeout_s.
        Returns:
            the result; with grad_wrt, {"output": result, "grads": [Tensor | None per index]}.
        """
        return self._request(
            "call",
            {"target": func, "seed": seed, "grad_wrt": grad_wrt},
            {"args": list(args), "kwargs": kwargs, "set_globals": set_globals, "grad": grad_output},
            timeout_s,
        )

    def new(
        self,
        cls: str,
        args: list[Any],
        kwargs: dict[str, Any] | None = None,
        *,
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        substitute: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> int:
        """Construct cls(*args, **kwargs) under torch.manual_seed(seed).

        Args:
            substitute: student global name -> name in helpers_source, rebound while constructing
                (e.g. {"Layer": "ProbeLayer"} builds a stack with the probe in place of the student's
                Layer, so the stack is checked apart from its layers).
        Returns:
            the handle of the object.
        """
        with self._lock:
            handle = self._last_handle + 1
            self._request(
                "new",
                {"target": cls, "seed": seed, "handle": handle, "substitute": substitute},
                {"args": list(args), "kwargs": kwargs, "set_globals": set_globals},
                timeout_s,
            )
            self._last_handle = handle
            self._handles.add(handle)
            return handle

    def params(self, handle: int) -> list[tuple[str, list[int]]]:
        """Returns: named_parameters() of the module as (name, shape), in registration order."""
        return expect_params(self._request("params", {"handle": self._checked(handle)}, {}, None))

    def modules(self, handle: int) -> list[tuple[str, str]]:
        """Returns: named_modules() of the module as (name, class name)."""
        return expect_modules(self._request("modules", {"handle": self._checked(handle)}, {}, None))

    def load_state(self, handle: int, tensors: dict[str, torch.Tensor], strict: bool = True) -> None:
        """Load a state dict into the module (load_state_dict semantics)."""
        self._request(
            "load_state", {"handle": self._checked(handle), "strict": strict}, {"tensors": dict(tensors)}, None
        )

    def state(self, handle: int, *, timeout_s: float | None = None) -> dict[str, torch.Tensor]:
        """Returns: the module's state_dict() as plain CPU tensors (e.g. weights after training)."""
        return expect_state(self._request("state", {"handle": self._checked(handle)}, {}, timeout_s))

    def run(
        self,
        handle: int,
        method: str,
        args: list[Any],
        *,
        kwargs: dict[str, Any] | None = None,
        mode: Literal["eval", "train"] = "eval",
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        grad: torch.Tensor | None = None,
        grad_wrt: list[int] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """Run module.<method>(*args) ("forward" calls the module itself; dotted paths reach submodules).

        Args:
            mode: "eval" (model.eval(), no_grad unless a gradient is wanted) or "train".
            grad: upstream gradient: backpropagate the output with it.
            grad_wrt: indices of float tensor args whose gradients to return as well.
        Returns:
            the output; with grad/grad_wrt, {"output", "param_grads": {name: Tensor | None},
            "grads": [...] (with grad_wrt)}.
        """
        return self._request(
            "run",
            {
                "handle": self._checked(handle),
                "target": method,
                "method": method,
                "mode": mode,
                "seed": seed,
                "grad_wrt": grad_wrt,
            },
            {"args": list(args), "kwargs": kwargs, "set_globals": set_globals, "grad": grad},
            timeout_s,
        )

    def output_tail(self, lines: int = 20) -> str:
        """Returns: the last `lines` lines the student code printed (stdout and stderr)."""
        return self._output.tail(lines)

    def close(self) -> None:
        """Kill the worker and delete its sandbox directory."""
        with self._lock:
            self._closed = True
            self._finalizer()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # --- start-up -----------------------------------------------------------------------------
    def _start(self) -> WorkerProcess:
        self._check_budget()
        loaded = self._launcher.load(self._baseline, self.deadline)
        self._report = loaded.report
        self._handles = set()
        self.start_seconds.append(loaded.waited_s)
        self.isolation = loaded.isolation
        return loaded.process

    def _check_budget(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise BudgetSpent(BUDGET_REASON)

    # --- requests -----------------------------------------------------------------------------
    def _checked(self, handle: int) -> int:
        if handle in self._handles:
            return handle
        if 0 < handle <= self._last_handle:
            raise WorkerFailure(
                f"object handle {handle} was lost when the worker restarted after an earlier failure; build it again"
            )
        raise ValueError(f"unknown object handle {handle!r}")

    def _frame(self, fields: dict[str, Any], values: dict[str, Any]) -> bytes:
        encoder = ValueWriter(trusted_flatten, check_ref=self._checked)
        self._last_id = next(self._request_ids)
        header = {"id": self._last_id, **fields}
        header.update({key: encoder.encode(value) for key, value in values.items() if value is not None})
        return pack_frame(header, encoder.tensors)

    def _request(self, op: str, fields: dict[str, Any], values: dict[str, Any], timeout_s: float | None) -> Any:
        with self._lock:
            if self._closed:
                raise WorkerFailure("the worker was closed")
            self._check_budget()
            if self._broken:
                raise WorkerFailure(self._broken)
            worker = self._launcher.current
            if worker is None or not worker.alive:
                try:
                    worker = self._start()
                except WorkerFailure as failure:
                    self._broken = failure.reason
                    raise
            frame = self._frame({"op": op, **fields}, values)
            timeout = self.limits.timeout_s if timeout_s is None else timeout_s
            deadline = time.monotonic() + timeout
            budget = self.deadline if self.deadline is not None else float("inf")
            cut = budget < deadline  # the submission's budget cuts the request short
            deadline = min(deadline, budget)
            try:
                reply = worker.exchange(frame, deadline, self._on_event)
            except ExchangeError as exc:
                self._discard()
                if exc.kind == "timeout" and cut:
                    raise BudgetSpent(BUDGET_REASON) from None
                reason = {
                    "timeout": t("worker.timed_out", seconds=timeout),
                    "died": t("worker.died_during_request", how=exc.detail),
                    "memory": exc.detail,
                }.get(exc.kind, f"worker sent a malformed reply: {exc.detail}")  # "protocol"
                raise WorkerFailure(reason) from None
            return self._interpret(reply, self._last_id)

    def _on_event(self, event: dict[str, Any]) -> None:
        """A progress event during a request: a watched library call is recorded, the rest ignored."""
        if event.get("event") == library_calls.EVENT and event.get("name") in self._launcher.watch:
            self.library_calls.add(str(event["name"]))

    def _interpret(self, reply: tuple[dict[str, Any], bytes], frame_id: int) -> Any:
        """Turn a reply into a value or the right exception; nothing in it is trusted."""
        header, blob = reply
        status = header.get("status")
        if header.get("id") != frame_id:
            self._discard()
            raise WorkerFailure("worker sent a reply that does not belong to the request")
        if status == "ok":
            try:
                return ValueReader(load_blob(blob), self._resolve_reply).decode(header.get("value"))
            except ProtocolError as exc:
                self._discard()
                raise WorkerFailure(f"worker sent a malformed reply: {exc}") from None
        if status == "error":
            raise StudentError(
                text(header.get("exc_type")) or "Exception", text(header.get("message")), text(header.get("where"))
            )
        if status == "oom":
            self._discard()
            where = text(header.get("where"))
            raise WorkerFailure(
                t("worker.out_of_memory", limit=self.limits.memory_mb)
                + (t("worker.at", where=student_line(where)) if where else "")
            )
        if status == "invalid":
            raise WorkerFailure(f"the worker rejected the request: {text(header.get('message'))}")
        self._discard()
        raise WorkerFailure("worker sent a malformed reply: unknown status")

    def _resolve_reply(self, tag: str, body: Any) -> Any:
        if tag == "$ref" and isinstance(body, int) and body in self._handles:
            return Ref(body)
        raise ProtocolError(f"unexpected {tag} in a reply")

    def _discard(self) -> None:
        """Kill the current process (its handles are lost). The next request gets a fresh one, which
        is spawned right away as a standby so that its interpreter and torch load meanwhile."""
        self._handles = set()
        self._launcher.discard(None if self._closed else str(self._baseline.get("device", "cpu")))
