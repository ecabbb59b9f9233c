"""The hidden-check runner: the torch thread count the checks run under, and the verdicts it collects."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.checks.support import CheckContext
from autograder.runner import CHECK_THREADS, run_checks

CHECKS = """
import torch


def test_threads():
    assert torch.get_num_threads() == {threads}


def test_failing():
    assert False
"""


@pytest.fixture
def checks_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "checks"
    folder.mkdir()
    (folder / "test_runner_probe.py").write_text(CHECKS.format(threads=CHECK_THREADS), encoding="utf-8")
    return folder


def test_checks_run_with_the_check_threads_and_the_count_is_restored(checks_dir: Path) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        verdicts = run_checks(checks_dir, CheckContext(student=None, seed=0))  # type: ignore[arg-type]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert verdicts["threads"].passed
    assert not verdicts["failing"].passed


def test_a_student_exception_says_where_in_the_words_of_the_load_problems():
    """One form for cells and lines: "15번 셀 13번째 줄", not "(cell 15, line 13, in forward)" beside it."""
    from autograder.i18n import use_language
    from autograder.runner import explain_exception
    from autograder.sandbox import StudentError

    error = StudentError("NameError", "name 'output' is not defined", "cell 15, line 13, in forward")
    with use_language("ko"):
        message = explain_exception(error).message
        assert explain_exception(StudentError("ValueError", "x", "cell 2, line 1")).message.endswith(
            "(2번 셀 1번째 줄)."
        )
        assert "(elsewhere)" in explain_exception(StudentError("ValueError", "x", "elsewhere")).message
    assert (
        message
        == "코드에서 NameError 예외가 발생했습니다: name 'output' is not defined (15번 셀 13번째 줄, `forward` 안)."
    )
    assert "cell 15" not in message


STOPPED = """
import pytest
from pathlib import Path

MARK = Path({mark!r})


class Stop(BaseException):
    pass


def test_a_stops():
    raise {stop}


def test_b_would_run_after():
    MARK.write_text("ran")


def test_c_pytest_fail_is_a_failure():
    pytest.fail("a check's own failure")
"""


def test_a_stop_raised_in_a_check_ends_the_session_and_is_raised_again(tmp_path: Path) -> None:
    """pytest counted a BaseException raised in a check (the pool process's GradingStopped) as that
    check's failure and ran the rest: a stopped pool process went on grading (Ctrl-C took 30 s)."""
    folder = tmp_path / "checks"
    folder.mkdir()
    mark = tmp_path / "ran"
    (folder / "test_stop_probe.py").write_text(STOPPED.format(mark=str(mark), stop="Stop()"), encoding="utf-8")
    with pytest.raises(BaseException) as raised:
        run_checks(folder, CheckContext(student=None, seed=0))  # type: ignore[arg-type]
    assert type(raised.value).__name__ == "Stop"
    assert not mark.exists()
    (folder / "test_stop_probe.py").unlink()  # a module of another name: this process imported that one
    (folder / "test_error_probe.py").write_text(STOPPED.format(mark=str(mark), stop="ValueError()"), encoding="utf-8")
    verdicts = run_checks(folder, CheckContext(student=None, seed=0))  # type: ignore[arg-type]
    assert mark.exists() and not verdicts["a_stops"].passed and not verdicts["c_pytest_fail_is_a_failure"].passed


def test_a_statement_skipped_at_load_says_its_cell_and_line_as_the_checks_do() -> None:
    """One form for where: "2번 셀 9번째 줄" as in the checks' exceptions, not the worker's "cell 2, line 9"."""
    from autograder.i18n import t, use_language
    from autograder.part_kinds import _load_error

    error = {"label": "cell 2", "line": 9, "exc_type": "ModuleNotFoundError", "message": "No module named 'x'"}
    with use_language("ko"):
        text = _load_error(error)
        where = t("engine.where", cell=2, line=9)
    assert text.startswith(f"{where}: ModuleNotFoundError: No module named 'x'") and "cell 2" not in text
