"""Part 1's hidden checks on fixtures: the reference and correct alternatives get full marks, each
mutant loses points on its own part only, degenerate answers keep at most the structural points.
The cases and their expectations come from fixtures/cases.yaml (ae_corpus)."""

from __future__ import annotations

import pytest
from ae_corpus import CORRECT_PATH, CorpusCase, cases_of
from ae_inprocess import InProcessStudent
from ae_suite_runner import parts, points, run_suite

from assignments.attention_encoder.assignment import reference_student
from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS

UNIT_PARTS = [name for name in parts() if name != "training"]


def _points_of(case: CorpusCase | None) -> tuple[dict[str, float], dict[str, str | None]]:
    source = CORRECT_PATH.read_text(encoding="utf-8") if case is None else case.source()
    verdicts = run_suite(InProcessStudent(source, GRADER_GLOBALS))
    return points(verdicts), verdicts


def _full() -> dict[str, float]:
    return {name: float(parts()[name]["points"]) for name in UNIT_PARTS}


def test_every_configured_check_exists_and_passes_on_the_reference() -> None:
    verdicts = run_suite(reference_student())
    configured = sorted(c for name in UNIT_PARTS for c in parts()[name]["checks"])
    assert sorted(verdicts) == configured, "assignment.yml and the suite disagree on check ids"
    assert {c: m for c, m in verdicts.items() if m is not None} == {}
    assert all(sum(p["checks"].values()) == p["points"] for p in parts().values())


def test_the_reference_passes_for_another_seed() -> None:
    verdicts = run_suite(reference_student(), seed=12345)
    assert {c: m for c, m in verdicts.items() if m is not None} == {}


def test_the_notebook_style_solution_gets_full_marks() -> None:
    got, verdicts = _points_of(None)
    assert got == _full(), {c: m for c, m in verdicts.items() if m}


@pytest.mark.parametrize("case", cases_of("alternative"), ids=lambda c: c.id)
def test_a_correct_alternative_gets_full_marks(case: CorpusCase) -> None:
    got, verdicts = _points_of(case)
    assert got == _full(), {c: m for c, m in verdicts.items() if m}


@pytest.mark.parametrize("case", cases_of("mutant"), ids=lambda c: c.id)
def test_a_mutant_loses_points_on_its_part_only(case: CorpusCase) -> None:
    got, verdicts = _points_of(case)
    assert case.tag in UNIT_PARTS
    assert got[case.tag] < parts()[case.tag]["points"], f"{case.id} was not caught"
    others = {name: got[name] for name in UNIT_PARTS if name != case.tag}
    assert others == {name: _full()[name] for name in others}, {c: m for c, m in verdicts.items() if m}


@pytest.mark.parametrize("case", cases_of("degenerate"), ids=lambda c: c.id)
def test_a_degenerate_answer_keeps_at_most_the_structural_points(case: CorpusCase) -> None:
    # What a degenerate answer (right shapes and layout, no work) may keep of its part: the
    # structural checks (builds, parameters, output shape), never more than its cap.
    got, _ = _points_of(case)
    assert case.tag in UNIT_PARTS and case.cap is not None, case.id
    assert got[case.tag] <= case.cap * parts()[case.tag]["points"], got
    others = {name: got[name] for name in UNIT_PARTS if name != case.tag}
    assert others == {name: _full()[name] for name in others}
