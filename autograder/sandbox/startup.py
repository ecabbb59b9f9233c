"""Starting a submission's workers: spawn (a standby after failures), load statements, skip ones that kill it."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from autograder.i18n import student_line, t
from autograder.worker_runtime.protocol import ProtocolError, ValueReader, ValueWriter, load_blob, pack_frame

from .errors import BudgetSpent, WorkerFailure
from .limits import JAILED_MODES, Limits
from .plan import (
    HostState,
    SandboxDir,
    build_command,
    build_config,
    build_env,
    choose_isolation,
    pick_uid,
    preload_candidates,
    sandbox_uid,
)
from .process import ExchangeError, OutputLog, WorkerProcess
from .replies import clean_report, text
from .uidjail import seal
from .warm import fork_or_popen, warm_zygote

LOAD_REQUEST_ID = 0
BUDGET_REASON = "the submission's time budget ran out"


def trusted_flatten(tensor: torch.Tensor) -> torch.Tensor:
    """Args: a tensor the grader sends. Returns: a detached, contiguous CPU tensor."""
    return tensor.detach().to("cpu").contiguous()


# What each jail does about files and the network, for reports (weak: the audit hook).
PROTECTIONS = {
    "namespace": ("chroot of read-only system and Python dirs", "none (network namespace)"),
    "userns": ("bubblewrap root of read-only system and Python dirs", "none (network namespace)"),
    "uid": ("a fresh uid the grader's files are closed to", "seccomp: AF_UNIX sockets only"),
}


@dataclass
class Spawned:
    """A started worker process (waiting for its load request) and how it is confined."""

    process: WorkerProcess
    isolation: str
    uid: int | None
    memory_rlimit: str
    began: float

    def describe(self) -> dict[str, Any]:
        """Returns: the protections in force, for reports."""
        files, network = PROTECTIONS.get(self.isolation, ("audit hook (best effort)",) * 2)
        return {
            "mode": self.isolation,
            "uid": self.uid,
            "memory_rlimit": self.memory_rlimit,
            "network": network,
            "files": files,
        }


@dataclass
class Loaded:
    """A worker with the submission loaded."""

    process: WorkerProcess
    report: dict[str, Any]
    waited_s: float
    isolation: dict[str, Any]


class Launcher:
    """Owns a submission's sandbox directory and its worker processes (current and standby)."""

    def __init__(
        self,
        limits: Limits,
        statements: list[list[Any]],
        helpers_source: str,
        extra_paths: Sequence[Path],
        data_paths: Sequence[Path],
        output: OutputLog,
        watch: Sequence[str] = (),
    ) -> None:
        """Args: as for Worker; output: the log every process of this submission prints into."""
        self.limits, self.statements, self.helpers_source = limits, statements, helpers_source
        self.watch = list(watch)
        self.data_paths, self.output = list(data_paths), output
        self.uid = pick_uid(limits)
        self.sandbox = SandboxDir(extra_paths, self.uid)
        self.skipped: dict[tuple[int, int], dict[str, Any]] = {}
        self.preload = preload_candidates([str(item[2]) for item in statements])
        self.current: WorkerProcess | None = None
        self.standby: Spawned | None = None

    def spawn(self, device: str) -> Spawned:
        """Start a worker process (jail, limits, import torch); it then waits for its load request."""
        isolation = choose_isolation(self.limits)
        uid = sandbox_uid(self.uid, isolation)
        config = build_config(self.limits, isolation, uid, self.sandbox, device, self.data_paths, self.preload)
        if isolation == "uid":
            jail = config["jail"]
            seal(jail["hidden"], [*jail["python_dirs"], *jail["data_dirs"], str(self.sandbox.path)])
        config_path = self.sandbox.write_config(json.dumps(config))
        env = build_env(self.limits, isolation, self.sandbox)
        zygote = warm_zygote(self.limits, isolation)
        start = None
        if zygote is not None:
            # the fork's own config: its memory rlimit also covers what the zygote preloaded (the
            # cold fallback below keeps config_path, without that allowance)
            allowance = zygote.memory_allowance_mb(config["limits"]["memory_rlimit"], self.preload)
            warm_config = {**config, "limits": {**config["limits"], "preloaded_mb": allowance}}
            request = {
                "lib_dir": str(self.sandbox.lib),
                "config_path": str(self.sandbox.write_config(json.dumps(warm_config))),
                "env": env,
                "cwd": str(self.sandbox.work),
            }
            start = functools.partial(fork_or_popen, zygote, request)
        process = WorkerProcess(
            lambda fds: build_command(isolation, self.sandbox, config_path, fds),
            env,
            str(self.sandbox.work),
            self.output,
            isolation in JAILED_MODES,
            self.limits.reply_mb << 20,
            memory_limit_mb=self.limits.memory_mb,
            start=start,
        )
        process.kill_uid = uid if isolation == "uid" else None  # its processes end with it, all of them
        return Spawned(process, isolation, uid, config["limits"]["memory_rlimit"], time.monotonic())

    def discard(self, device: str | None) -> None:
        """Kill the current process; with a device, spawn a standby so its start overlaps other work."""
        if self.current is not None:
            self.current.close()
            self.current = None
        if device is not None and self.standby is None:
            self.standby = self.spawn(device)

    def load(self, baseline: dict[str, Any], deadline: float | None = None) -> Loaded:
        """Get a worker (the standby if there is one) and run the statements in it.

        Args:
            baseline: the grader globals (already with torch.device values).
            deadline: time.monotonic() value that cuts the load (BudgetSpent), or None.
        Returns:
            the loaded worker.
        Raises:
            WorkerFailure: the worker could not be started (the reason says why).
        """
        device = str(baseline.get("device", "cpu"))
        retried_isolation = False
        while True:
            waited_from = time.monotonic()
            spawned, self.standby = self.standby or self.spawn(device), None
            self.current = spawned.process
            running: dict[str, Any] = {}
            # each statement gets timeout_s; progress events cannot stretch the load beyond this
            hard_deadline = (
                spawned.began + self.limits.startup_timeout_s + self.limits.timeout_s * max(10, len(self.statements))
            )

            # Called only while this statement runs, so it sees this iteration's values.
            def on_event(event: dict[str, Any]) -> float:
                at, line = event.get("at"), event.get("line")
                if (
                    isinstance(at, list)
                    and len(at) == 2
                    and all(type(v) is int for v in at)
                    and 0 <= at[0] < len(self.statements)
                    and type(line) is int
                ):  # untrusted
                    running.update(at=tuple(at), line=line)  # noqa: B023
                return min(time.monotonic() + self.limits.timeout_s, hard_deadline, budget)  # noqa: B023

            budget = deadline if deadline is not None else float("inf")
            try:
                reply = spawned.process.exchange(
                    self._load_frame(baseline), min(spawned.began + self.limits.startup_timeout_s, budget), on_event
                )
            except ExchangeError as exc:
                self.discard(None)
                if exc.kind == "timeout" and time.monotonic() >= budget:
                    raise BudgetSpent(BUDGET_REASON) from None
                if (
                    not running
                    and exc.kind == "died"
                    and not retried_isolation
                    and HostState.learn_from_exit(spawned.isolation, spawned.process.proc.returncode)
                ):
                    retried_isolation = True  # e.g. no mount permission in a container: go plain
                    continue
                if (
                    running
                    and len(self.skipped) < self.limits.max_skipped_statements
                    and running["at"] not in self.skipped
                ):
                    self._skip(running["at"], running["line"], exc)
                    continue
                raise WorkerFailure(self._failure(exc, running)) from None
            report = self._report(reply)
            return Loaded(spawned.process, report, time.monotonic() - waited_from, spawned.describe())

    def release(self) -> None:
        """Kill every process and delete the sandbox directory."""
        self.discard(None)
        if self.standby is not None:
            self.standby.process.close()
            self.standby = None
        self.sandbox.remove()

    def _load_frame(self, baseline: dict[str, Any]) -> bytes:
        encoder = ValueWriter(trusted_flatten)
        header = {
            "op": "load",
            "id": LOAD_REQUEST_ID,
            "statements": self.statements,
            "helpers": self.helpers_source,
            "watch": self.watch,
            "skip": [list(at) for at in self.skipped],
            "globals": encoder.encode(baseline),
        }
        return pack_frame(header, encoder.tensors)

    def _report(self, reply: tuple[dict[str, Any], bytes]) -> dict[str, Any]:
        header, blob = reply
        try:
            if header.get("id") != LOAD_REQUEST_ID:
                raise ProtocolError("reply to another request")
            if header.get("status") == "ok":
                value = ValueReader(load_blob(blob)).decode(header.get("value"))
                return clean_report(value, list(self.skipped.values()))
            problem = f"{text(header.get('exc_type'))} {text(header.get('message'))}".strip()
        except (ProtocolError, WorkerFailure) as exc:
            problem = f"malformed reply: {exc}"
        self.discard(None)
        raise WorkerFailure(f"worker failed to start: {problem}")

    def _skip(self, at: tuple[int, int], line: Any, exc: ExchangeError) -> None:
        label = self.statements[at[0]][0]
        if exc.kind == "timeout":
            message = t("worker.skipped_timeout", seconds=self.limits.timeout_s)
        elif exc.kind in ("died", "memory"):
            message = t("worker.skipped_died", how=exc.detail)
        else:
            message = t("worker.skipped_protocol", detail=exc.detail)
        self.skipped[at] = {
            "label": label,
            "line": line,
            "exc_type": "WorkerFailure",
            "message": message,
            "where": f"{label}, line {line}",
            "memory": False,
        }

    def _failure(self, exc: ExchangeError, running: dict[str, Any]) -> str:
        if exc.kind == "timeout":  # the statement's own limit, or the start-up's before any statement ran
            detail = t("worker.timed_out", seconds=self.limits.timeout_s if running else self.limits.startup_timeout_s)
        else:
            detail = t("worker.process", how=exc.detail) if exc.kind in ("died", "memory") else exc.detail
        if running:
            label = self.statements[running["at"][0]][0]
            detail += t("worker.while_running", where=student_line(f"{label}, line {running['line']}"))
        tail = self.output.tail(3) if not running else ""  # bootstrap errors, not student prints
        if "failed to map segment" in tail or "MemoryError" in tail:
            detail += t("worker.memory_hint", memory_mb=self.limits.memory_mb)
        return t("worker.start_failed", detail=detail) + (t("worker.printed", tail=tail) if tail else "")
