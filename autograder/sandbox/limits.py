"""Resource limits and isolation settings for one sandboxed worker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Isolation = Literal["auto", "namespace", "userns", "weak", "plain"]
# The isolation levels a worker can actually run under ("plain" is an older name of "weak").
JAILED_MODES = ("namespace", "userns")


@dataclass(frozen=True)
class Limits:
    """What a worker may use. The lead maps grader.yml keys onto these fields.

    Attributes:
        timeout_s: wall-clock limit per request, and per student statement at start-up.
        startup_timeout_s: limit for the interpreter start and `import torch` (before statements).
        memory_mb: address-space limit of each process (RLIMIT_AS; RLIMIT_DATA when the device is
            CUDA), and the limit of the resident memory of the worker's whole process tree (a
            watchdog kills the sandbox when the sum over its processes goes over it).
        output_bytes: how much of the student's stdout/stderr is kept (the tail); more is dropped,
            never an error.
        threads: torch intra-op threads (also OMP/MKL thread env vars).
        processes: RLIMIT_NPROC (processes and threads) for the sandbox user (set when root).
        cpu_s: RLIMIT_CPU over the worker's life: a backstop in case the grader cannot kill it.
        file_mb: RLIMIT_FSIZE: the largest file the worker may write.
        tmp_mb: size of the private /tmp (jailed modes).
        reply_mb: largest reply accepted from the worker; a larger one is refused before it is
            buffered and fails the request.
        isolation: "auto" (the root jail when root, the user-namespace jail otherwise; refuses to
            start when neither can be made), "namespace" (root jail), "userns" (bubblewrap jail
            without root), or "weak" (audit hook only, best effort: must be asked for).
        sandbox_uid: user the worker runs as when the grader is root. None (default): a fresh
            unprivileged uid per Worker, outside /etc/passwd, so that RLIMIT_NPROC counts only
            that worker's processes and workers cannot signal each other; 65534 = nobody (not
            in the jail without namespaces, which kills every process of the worker's uid).
        max_skipped_statements: statements that kill or hang the worker at start-up are skipped
            (and reported) up to this many; beyond it the worker counts as failed to start.
        warm_start: root jail only: fork each worker from this grading process's zygote, which
            has imported torch and `warm_preload` once (the other modes start cold). Off for a
            bare Limits(); gradings take it from grader.yml's worker.warm_start (on by default).
        warm_preload: modules the zygote imports (student-independent; a fixed, declared list).
    """

    timeout_s: float = 20.0
    startup_timeout_s: float = 60.0
    memory_mb: int = 4096
    output_bytes: int = 1_000_000
    threads: int = 1
    processes: int = 64
    cpu_s: int = 3600
    file_mb: int = 64
    tmp_mb: int = 64
    reply_mb: int = 256
    isolation: Isolation = "auto"
    sandbox_uid: int | None = None
    max_skipped_statements: int = 3
    warm_start: bool = False
    warm_preload: tuple[str, ...] = ()
