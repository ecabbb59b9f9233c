"""Answers written after public Transformer code: full marks when they follow the assignment, and
every kept deviation loses its part's points with a message that names it (in Korean)."""

from __future__ import annotations

import pytest
from public_agreement import every_disagreement
from style_corpus import FIXTURES, STYLES, StyleCase, cases, full_marks, grade

from autograder.assignment import load_assignment
from autograder.i18n import t_in

# The class each failing check's message speaks of.
CLASSES = {
    "mha_eval_output": "MultiHeadAttention",
    "encoder_eval_output": "Encoder",
    "encoder_layer_eval_output": "EncoderLayer",
    "decoder_eval_output": "Decoder",
    "decoder_layer_eval_output": "DecoderLayer",
    "transformer_eval_output": "Transformer",
}


def _message(case: StyleCase, key: str, **fields: object) -> str:
    """The assignment catalogue's Korean message (the checks' default language)."""
    folder = load_assignment(case.assignment).messages_dir
    assert folder is not None
    return t_in(folder, key, language="ko", **fields)


def test_every_style_has_an_answer_for_both_assignments_and_every_deviation_file_is_listed() -> None:
    listed = {f"{c.style}_{c.deviation}.py.txt" for c in cases() if c.deviation}
    for assignment in ("attention_encoder", "transformer_mt"):
        present = {p.name for p in (FIXTURES / assignment).glob("*.py.txt")}
        assert {f"{style}.py.txt" for style in STYLES} <= present
        deviations = {name for name in present if name.count("_") and name.split("_", 1)[0] in STYLES}
        assert deviations <= listed, sorted(deviations - listed)


@pytest.mark.parametrize("case", [c for c in cases() if c.deviation is None], ids=lambda c: c.id)
def test_an_answer_that_follows_the_assignment_gets_full_marks(case: StyleCase) -> None:
    paid, points = grade(case)
    assert points == full_marks(case.assignment), {c: v.message for c, v in paid.items() if not v.passed}


@pytest.mark.parametrize("case", [c for c in cases() if c.deviation], ids=lambda c: c.id)
def test_a_kept_deviation_is_named_by_the_failing_check(case: StyleCase) -> None:
    paid, points = grade(case)
    assert case.check is not None and case.deviation is not None
    verdict = paid[case.check]
    assert not verdict.passed
    if case.deviation == "criterion_ignored":
        given = {"compact": 0.1, "annotated": 0.0}[case.style]  # the first case whose criterion differs
        want = _message(case, "checks.loss.criterion_ignored", smoothing=given, used=0.1 - given)
    else:
        prefix = "ae.module" if case.assignment == "attention_encoder" else "checks.module"
        want = _message(case, f"{prefix}.deviation.{case.deviation}", cls=CLASSES[case.check])
    assert verdict.message == want
    assert sum(points.values()) < sum(full_marks(case.assignment).values())
    if case.deviation.startswith("heads_"):  # every failing MHA check names it: transplant, padding, permutation
        assert {v.message for c, v in paid.items() if c.startswith("mha_") and not v.passed} == {want}


@pytest.mark.e2e  # every case graded and run through the public checks, Part 1's soundness corpus too
def test_the_public_and_hidden_checks_agree_on_every_case() -> None:
    # No public check fails a submission the hidden checks give full marks, and where both fail code
    # that keeps a known deviation the public message names it too (tests/assignments/styles/public_agreement.py).
    found, _cascades = every_disagreement()
    assert found == []
