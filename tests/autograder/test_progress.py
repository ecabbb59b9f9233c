"""Tests for autograder.progress: a bar on a terminal, one line per event elsewhere, training lines."""

from __future__ import annotations

import io
import re
import time

from autograder import progress
from autograder.i18n import use_language
from autograder.progress import BatchProgress, training_progress, training_progress_shown


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_batch_progress_writes_one_line_per_submission_when_not_on_a_terminal():
    stream = io.StringIO()
    with BatchProgress(3, enabled=True, language="en", stream=stream) as bar:
        for name in ("a.ipynb", "b.ipynb", "c.ipynb"):
            bar.finished(name, 1.25)
    start, *lines = stream.getvalue().splitlines()
    assert start.startswith("Grading 3 submission(s), 1 at a time: starting the workers")
    assert len(lines) == 3 and "\r" not in stream.getvalue()
    assert lines[0] == "[1/3] a.ipynb graded in 1.2 s; time left: measuring"
    assert re.fullmatch(r"\[3/3\] c\.ipynb graded in 1\.2 s; time left: 0:00", lines[2])


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
    assert stream.getvalue().splitlines()[1] == "[1/2] a.ipynb graded in 1.0 s; time left: measuring"


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


def test_the_batch_says_it_started_before_any_result_and_in_korean_by_default():
    stream = io.StringIO()
    with BatchProgress(45, enabled=True, language="ko", stream=stream, jobs=4):
        assert (
            stream.getvalue()
            == "제출물 45개를 4개씩 채점합니다: 작업 프로세스를 시작하는 중(torch와 검사를 불러오는 중)\n"
        )


def test_time_left_comes_from_the_pace_between_results_not_from_the_start_up(monkeypatch):
    """A 30 s start-up, then one result every 2 s: 2 s per submission left, not 30."""
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    with BatchProgress(20, enabled=True, language="en", stream=stream) as bar:
        now[0] += 30.0
        bar.finished("s1.ipynb", 30.0)
        for index in range(2, 6):
            now[0] += 2.0
            bar.finished(f"s{index}.ipynb", 2.0)
    lines = stream.getvalue().splitlines()
    assert lines[1].endswith("time left: measuring")
    assert lines[2].endswith("time left: 0:36")  # 18 left at 2 s each
    assert lines[5].endswith("time left: 0:30")  # 15 left at 2 s each (30 s of start-up would say 4:30)


def test_a_long_training_part_says_it_still_runs_between_evaluations(monkeypatch):
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.05)
    stream = io.StringIO()
    with use_language("ko"), training_progress_shown("hw.ipynb", 900, enabled=True, stream=stream):
        time.sleep(0.3)
        training_progress(200, "score 0.1")
        quiet_from = len(stream.getvalue().splitlines())
    time.sleep(0.2)  # after the block: no more lines
    lines = stream.getvalue().splitlines()
    alive = [line for line in lines if line.startswith("hw.ipynb: 학습 중, 경과 0:00, 남은 예산 15:00")]
    assert len(alive) >= 2 and len(lines) == quiet_from
