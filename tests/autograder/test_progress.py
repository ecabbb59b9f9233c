"""Tests for autograder.progress: a bar on a terminal, one line per event elsewhere, training lines."""

from __future__ import annotations

import io
import re

from autograder import progress
from autograder.progress import BatchProgress, training_progress, training_progress_shown


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_batch_progress_writes_one_line_per_submission_when_not_on_a_terminal():
    stream = io.StringIO()
    with BatchProgress(3, enabled=True, language="en", stream=stream) as bar:
        for name in ("a.ipynb", "b.ipynb", "c.ipynb"):
            bar.finished(name, 1.25)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in stream.getvalue()
    assert lines[0].startswith("[1/3] a.ipynb graded in 1.2 s; about ")
    assert re.fullmatch(r"\[3/3\] c\.ipynb graded in 1\.2 s; about 0:00 left", lines[2])


def test_batch_progress_draws_a_bar_on_a_terminal_in_the_configured_language(monkeypatch):
    monkeypatch.setattr(progress, "_columns", lambda stream: 80)  # a terminal 80 columns wide
    stream = _Terminal()
    with BatchProgress(4, enabled=True, language="ko", stream=stream) as bar:
        bar.finished("a.ipynb", 2.0)
    shown = stream.getvalue()
    assert "채점 중" in shown and "1/4" in shown and "\r" in shown  # tqdm redraws one line


def test_a_terminal_without_a_size_gets_lines():
    stream = _Terminal()  # reports no size, like a pseudo-terminal nobody sized: tqdm would draw nothing
    with BatchProgress(2, enabled=True, language="en", stream=stream) as bar:
        bar.finished("a.ipynb", 1.0)
    assert stream.getvalue().startswith("[1/2] a.ipynb graded in 1.0 s; about ")


def test_disabled_progress_writes_nothing():
    stream = _Terminal()
    with BatchProgress(2, enabled=False, stream=stream) as bar:
        bar.finished("a.ipynb", 1.0)
    with training_progress_shown("a.ipynb", 900, enabled=False, stream=stream):
        training_progress(200, "loss 0.1")
    assert stream.getvalue() == ""


def test_training_lines_give_step_bleu_and_budget_left_only_inside_the_block():
    stream = io.StringIO()
    training_progress(10, "score 0.5")  # outside any block: nothing, nowhere
    with training_progress_shown("hw.ipynb", 900, enabled=True, stream=stream):
        training_progress(200, "score 0.1712")
        training_progress(210, "score 0.0123, estimated")
    training_progress(220, "score 0.2")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "hw.ipynb: training part started (time budget 15:00)"
    assert re.fullmatch(r"hw\.ipynb: step 200, score 0\.1712, 0:0\d elapsed, 1[45]:\d\d of the budget left", lines[1])
    assert "step 210, score 0.0123, estimated, " in lines[2]
    assert len(lines) == 3
