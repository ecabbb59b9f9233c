"""SIGTERM stops the command as Ctrl-C does: the same unwinding, every stored result kept, no process left."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[list[int]]:
    """While inside, the first SIGTERM raises KeyboardInterrupt in the main thread.

    Without this, SIGTERM ends the grader at once while its pool processes go on grading (they
    ignore the grader's death until their submission is done). As a KeyboardInterrupt it takes
    Ctrl-C's path: the pool is stopped, results already stored stay, one line is printed. Later
    SIGTERMs are ignored while that runs, so a second one cannot cut the cleanup short. Outside
    the main thread (signals can only be set there) nothing changes.

    Returns:
        a list that holds SIGTERM's number once one arrived (empty otherwise).
    """
    received: list[int] = []

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        if received:
            return  # already stopping
        received.append(signum)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)
