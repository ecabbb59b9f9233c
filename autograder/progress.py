"""Progress of long gradings on stderr: a bar per batch on a terminal, one line per event elsewhere."""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO

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

    def __init__(self, total: int, enabled: bool, language: str = "en", stream: TextIO | None = None) -> None:
        """Args: total, the submissions to grade; enabled, False shows nothing; language, of the
        texts (grader.yml feedback.language); stream, default stderr."""
        self.total, self.done, self.language = total, 0, language
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.started = time.monotonic()
        # A terminal that reports no size (a pseudo-terminal nobody sized) gets lines: tqdm draws nothing there.
        is_tty = bool(getattr(self.stream, "isatty", lambda: False)()) and _columns(self.stream) > 0
        self.bar: tqdm[None] | None = None
        if self.enabled and is_tty:
            with use_language(language):
                desc = t("progress.batch")
            self.bar = tqdm(total=total, file=self.stream, unit="submission", desc=desc, dynamic_ncols=True)

    def finished(self, label: str, seconds: float | None = None) -> None:
        """Count one finished submission.

        Args:
            label: its name in the reports.
            seconds: how long its grading took (None: unknown).
        """
        self.done += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update()
            return
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        took = "?" if seconds is None else f"{seconds:.1f}"
        with use_language(self.language):
            line = t(
                "progress.batch_line", done=self.done, total=self.total, label=label, seconds=took, eta=_clock(left)
            )
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


@dataclass
class _TrainingReporter:
    label: str
    budget_s: float
    stream: TextIO
    started: float = field(default_factory=time.monotonic)


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
    print(t("progress.training_start", label=label, budget=_clock(budget_s)), file=reporter.stream, flush=True)
    token = _training.set(reporter)
    try:
        yield
    finally:
        _training.reset(token)


def training_progress(step: int, measure: str) -> None:
    """Say that the training part evaluated its weights (nothing outside `training_progress_shown`).

    Args:
        step: the optimizer step the weights are at.
        measure: what the evaluation found, in the assignment's words (student-facing).
    """
    reporter = _training.get()
    if reporter is None:
        return
    elapsed = time.monotonic() - reporter.started
    line = t(
        "progress.training_eval",
        label=reporter.label,
        step=step,
        measure=measure,
        elapsed=_clock(elapsed),
        left=_clock(reporter.budget_s - elapsed),
    )
    print(line, file=reporter.stream, flush=True)
