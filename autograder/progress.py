"""Progress of long gradings on stderr: a bar per batch on a terminal, one line per event elsewhere."""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from tqdm import tqdm

from autograder.i18n import t, use_language


def _columns(stream: TextIO) -> int:
    """The terminal's width in columns (0: unknown)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


def _clock(seconds: float) -> str:
    """Seconds as m:ss (h:mm:ss from an hour on)."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class BatchProgress:
    """Submissions done out of the batch's total, with the time left at the pace so far.

    On a sized terminal: a tqdm bar (done/total, rate, ETA). Elsewhere (a log file, CI): one line per
    finished submission, so that a log shows progress without carriage returns.
    """

    def __init__(
        self, total: int, enabled: bool, language: str = "en", stream: TextIO | None = None, jobs: int = 1
    ) -> None:
        """Args: total, the submissions to grade; enabled, False shows nothing; language, of the
        texts (grader.yml feedback.language); stream, default stderr; jobs, gradings at a time."""
        self.total, self.done, self.language = total, 0, language
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.first_done: float | None = None  # the pace is measured from the first finished grading on
        # A terminal that reports no size (a pseudo-terminal nobody sized) gets lines: tqdm draws nothing there.
        is_tty = bool(getattr(self.stream, "isatty", lambda: False)()) and _columns(self.stream) > 0
        self.bar: tqdm[None] | None = None
        if not self.enabled:
            return
        with use_language(language):  # at once: the workers' start-up (torch, the checks) takes seconds
            print(t("console.batch_start", count=total, jobs=min(jobs, total)), file=self.stream, flush=True)
            desc, self.measuring = t("progress.batch"), t("console.eta_measuring")
        if is_tty:  # tqdm's own estimate would count the start-up as grading time: ours is shown instead
            bar_format = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}, {postfix}]"
            self.bar = tqdm(total=total, file=self.stream, desc=desc, dynamic_ncols=True, bar_format=bar_format)
            self.bar.set_postfix_str(self.measuring)

    def time_left(self) -> str:
        """The time the rest should take at the pace measured between finished gradings (m:ss), or
        "measuring" until two have finished: the first one's time includes the workers' start-up."""
        now = time.monotonic()
        if self.first_done is None:
            self.first_done = now
        if self.done < 2 or now <= self.first_done:
            return self.measuring if self.done < self.total else _clock(0)
        return _clock((now - self.first_done) / (self.done - 1) * (self.total - self.done))

    def finished(self, label: str, seconds: float | None = None) -> None:
        """Count one finished submission.

        Args:
            label: its name in the reports.
            seconds: how long its grading took (None: unknown).
        """
        self.done += 1
        if not self.enabled:
            return
        left = self.time_left()
        if self.bar is not None:
            self.bar.set_postfix_str(left, refresh=False)
            self.bar.update()
            return
        took = "?" if seconds is None else f"{seconds:.1f}"
        with use_language(self.language):
            line = t("progress.batch_line", done=self.done, total=self.total, label=label, seconds=took, eta=left)
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        """Close the bar (the terminal line stays as it is)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> BatchProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Between two evaluations a training part may run for minutes: a line at least this often says it still runs.
HEARTBEAT_S = 30.0


@dataclass
class _TrainingReporter:
    label: str
    budget_s: float
    stream: TextIO
    started: float = field(default_factory=time.monotonic)
    last_line: float = field(default_factory=time.monotonic)

    def say(self, key: str, **fields: Any) -> None:
        """Print one line of the catalogue's `key` (label, elapsed and budget left filled in)."""
        elapsed = time.monotonic() - self.started
        line = t(key, label=self.label, elapsed=_clock(elapsed), left=_clock(self.budget_s - elapsed), **fields)
        print(line, file=self.stream, flush=True)
        self.last_line = time.monotonic()

    def beat(self, stop: threading.Event) -> None:
        """Until `stop`: a line whenever HEARTBEAT_S passed without one (run in a thread of its own)."""
        while not stop.wait(max(0.01, self.last_line + HEARTBEAT_S - time.monotonic())):
            if time.monotonic() - self.last_line >= HEARTBEAT_S:
                self.say("progress.training_alive")


_training: contextvars.ContextVar[_TrainingReporter | None] = contextvars.ContextVar("training_progress", default=None)


@contextlib.contextmanager
def training_progress_shown(label: str, budget_s: float, enabled: bool, stream: TextIO | None = None) -> Iterator[None]:
    """Within this block, `training_progress` prints one line per evaluation of the training part.

    Args:
        label: the submission (file name) the lines are about.
        budget_s: the training's time budget (the lines say how much of it is left).
        enabled: False prints nothing.
        stream: where the lines go (default stderr).
    """
    if not enabled:
        yield
        return
    reporter = _TrainingReporter(label, budget_s, stream if stream is not None else sys.stderr)
    reporter.say("progress.training_start", budget=_clock(budget_s))
    token = _training.set(reporter)
    stop = threading.Event()  # the thread runs in a copy of this context: the same language
    threading.Thread(target=contextvars.copy_context().run, args=(reporter.beat, stop), daemon=True).start()
    try:
        yield
    finally:
        stop.set()
        _training.reset(token)


def training_progress(step: int, measure: str) -> None:
    """Say that the training part evaluated its weights (nothing outside `training_progress_shown`).

    Args:
        step: the optimizer step the weights are at.
        measure: what the evaluation found, in the assignment's words (student-facing).
    """
    reporter = _training.get()
    if reporter is not None:
        reporter.say("progress.training_eval", step=step, measure=measure)
