"""A student's exception met on a grader's stand-in class speaks of the student's class, not the grader's."""

from __future__ import annotations

from autograder.i18n import use_language
from autograder.runner import explain_exception
from autograder.sandbox import StudentError


def test_an_error_on_a_probe_names_the_students_class_and_why_a_stand_in_is_there() -> None:
    error = StudentError("AttributeError", "'ProbeDecoderLayer' object has no attribute 'self_attn'", "cell 9")
    with use_language("ko"):
        verdict = explain_exception(error)
    assert not verdict.passed and verdict.blocking
    assert "Probe" not in verdict.message
    assert "'DecoderLayer' object has no attribute 'self_attn'" in verdict.message
    assert "대역" in verdict.message and "`DecoderLayer`" in verdict.message


def test_an_error_of_the_students_own_code_is_told_as_it_is() -> None:
    error = StudentError("ValueError", "bad shape (Probes of mine)", "")
    with use_language("en"):
        verdict = explain_exception(error)
    assert verdict.message == "Your code raised ValueError: bad shape (Probes of mine)."
