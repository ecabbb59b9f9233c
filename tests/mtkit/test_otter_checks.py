"""grader.check through mtkit.otter_checks: Otter's own checks, the results worded from the catalogue."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from autograder.i18n import t
from mtkit.otter_checks import KEYS, WORDS_FILE, CheckResult, Notebook, case_details

# An Otter test file (exception format): an assertion with a hint, a bare assertion, and one that
# reaches a name the notebook does not define.
TEST_FILE = """
from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 6

@test_case(points=2, hidden=False)
def test_passes(env):
    assert env["answer"] == 42

@test_case(points=2, hidden=False, failure_message="반환값을 확인하세요.")
def test_hint(env):
    assert env["answer"] == 41, "answer 는 41 이어야 하는데 42 입니다."

@test_case(points=2, hidden=False)
def test_missing(env):
    env["missing_function"]()
"""
ENGLISH_FRAME = ("results:", "Test case failed", "Error at line", "Test case passed", "passed!")


@pytest.fixture
def tests_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A notebook folder with tests/q1.py and the Korean words the template build writes."""
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "q1.py").write_text(TEST_FILE, encoding="utf-8")
    words = {key: t(f"otter.check.{key}", language="ko") for key in KEYS}
    (folder / WORDS_FILE).write_text(json.dumps(words, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # Otter writes its .OTTER_LOG into the working folder
    return folder


def test_a_check_in_the_notebook_is_worded_in_korean(tests_dir: Path) -> None:
    result = Notebook(tests_dir=str(tests_dir)).check("q1", {"answer": 42})
    assert isinstance(result, CheckResult)
    assert not result.passed_all and result.score == 2 and result.possible == 6  # Otter's own attributes
    text = result.summary()
    assert text.splitlines()[0] == "q1 결과: 2/6점"
    assert "    q1 - 1: ✅ 통과" in text and "    q1 - 2: ❌ 실패" in text
    assert "        도움말: 반환값을 확인하세요." in text
    assert "        answer 는 41 이어야 하는데 42 입니다." in text
    assert "(검사 q1의 " in text and "번째 줄에서 멈춤)" in text
    # Any other exception: Python's text quoted in the catalogue's sentence, the test's line as code.
    assert "`KeyError: missing_function` 예외가 발생했습니다" in text
    assert '`env["missing_function"]()`' in text
    html = result._repr_html_()
    for shown in (text, html, repr(result)):
        assert not any(frame in shown for frame in ENGLISH_FRAME), shown
    assert "q1 결과: 2/6점" in html and "color: red" in html


def test_the_calling_cells_globals_are_checked_by_default(tests_dir: Path) -> None:
    grader = Notebook(tests_dir=str(tests_dir))
    namespace: dict[str, Any] = {"grader": grader, "answer": 41}
    exec("result = grader.check('q1')", namespace)  # as a notebook cell runs
    assert "q1 - 1: ❌ 실패" in namespace["result"].summary()  # answer 41 fails the first case


def test_html_escapes_what_the_check_said(tests_dir: Path) -> None:
    (tests_dir / "q1.py").write_text(TEST_FILE.replace("answer 는 41", "<b>answer</b> 는 41"), encoding="utf-8")
    html = Notebook(tests_dir=str(tests_dir)).check("q1", {"answer": 42})._repr_html_()
    assert "&lt;b&gt;answer&lt;/b&gt;" in html and "<b>answer</b>" not in html


def test_a_passing_question_is_one_line(tests_dir: Path) -> None:
    (tests_dir / "q1.py").write_text(TEST_FILE.split("@test_case(points=2, hidden=False, failure")[0], encoding="utf-8")
    result = Notebook(tests_dir=str(tests_dir)).check("q1", {"answer": 42})
    assert result.passed_all and result.summary() == "q1: 모든 검사를 통과했습니다(2/2점) ✅"


def test_without_the_words_file_otters_result_is_unchanged(tests_dir: Path) -> None:
    os.remove(tests_dir / WORDS_FILE)
    result = Notebook(tests_dir=str(tests_dir)).check("q1", {"answer": 42})
    assert not isinstance(result, CheckResult) and "Test case failed" in result.summary()


def test_a_message_outside_otters_frame_is_kept() -> None:
    words = {key: t(f"otter.check.{key}", language="ko") for key in KEYS}
    said = "모양이 (2, 6)인 배치에서\n열려 있습니다"
    assert case_details(said, words) == said.splitlines()
