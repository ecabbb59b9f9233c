"""Part 1's hidden checks on fixtures: the reference and correct alternatives get full marks, each
mutant loses points on its own part only, degenerate answers keep at most the structural points."""

from __future__ import annotations

from pathlib import Path

import pytest
from ae_inprocess import InProcessStudent
from ae_suite_runner import parts, points, run_suite

from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS
from assignments.attention_encoder.checks.reference_student import ReferenceStudent

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORRECT = (FIXTURES / "correct.py.txt").read_text(encoding="utf-8")
UNIT_PARTS = [name for name in parts() if name != "training"]
# What a degenerate answer (right shapes and layout, no work) may keep of its part: the
# structural checks (builds, parameters, output shape), never more than this share.
DEGENERATE_CAP = 0.3


def _fixtures(kind: str) -> list[Path]:
    return sorted((FIXTURES / kind).glob("*.py.txt"))


def _tag(path: Path) -> str:
    """The part a mutant or degenerate fixture breaks: its first line says `# part: <name>.`"""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    return first.removeprefix("# part: ").split(".")[0]


def _points_of(extra: Path | None) -> tuple[dict[str, float], dict[str, str | None]]:
    source = CORRECT if extra is None else CORRECT + "\n\n" + extra.read_text(encoding="utf-8")
    verdicts = run_suite(InProcessStudent(source, GRADER_GLOBALS))
    return points(verdicts), verdicts


def _full() -> dict[str, float]:
    return {name: float(parts()[name]["points"]) for name in UNIT_PARTS}


def test_every_configured_check_exists_and_passes_on_the_reference() -> None:
    verdicts = run_suite(ReferenceStudent(GRADER_GLOBALS))
    configured = sorted(c for name in UNIT_PARTS for c in parts()[name]["checks"])
    assert sorted(verdicts) == configured, "assignment.yml and the suite disagree on check ids"
    assert {c: m for c, m in verdicts.items() if m is not None} == {}
    assert all(sum(p["checks"].values()) == p["points"] for p in parts().values())


def test_the_reference_passes_for_another_seed() -> None:
    verdicts = run_suite(ReferenceStudent(GRADER_GLOBALS), seed=12345)
    assert {c: m for c, m in verdicts.items() if m is not None} == {}


def test_the_notebook_style_solution_gets_full_marks() -> None:
    got, verdicts = _points_of(None)
    assert got == _full(), {c: m for c, m in verdicts.items() if m}


@pytest.mark.parametrize("fixture", _fixtures("alternatives"), ids=lambda p: p.name.removesuffix(".py.txt"))
def test_a_correct_alternative_gets_full_marks(fixture: Path) -> None:
    got, verdicts = _points_of(fixture)
    assert got == _full(), {c: m for c, m in verdicts.items() if m}


@pytest.mark.parametrize("fixture", _fixtures("mutants"), ids=lambda p: p.name.removesuffix(".py.txt"))
def test_a_mutant_loses_points_on_its_part_only(fixture: Path) -> None:
    got, verdicts = _points_of(fixture)
    tag = _tag(fixture)
    assert tag in UNIT_PARTS
    assert got[tag] < parts()[tag]["points"], f"{fixture.name} was not caught"
    others = {name: got[name] for name in UNIT_PARTS if name != tag}
    assert others == {name: _full()[name] for name in others}, {c: m for c, m in verdicts.items() if m}


@pytest.mark.parametrize("fixture", _fixtures("degenerate"), ids=lambda p: p.name.removesuffix(".py.txt"))
def test_a_degenerate_answer_keeps_at_most_the_structural_points(fixture: Path) -> None:
    got, _ = _points_of(fixture)
    tag = _tag(fixture)
    assert got[tag] <= DEGENERATE_CAP * parts()[tag]["points"], got
    others = {name: got[name] for name in UNIT_PARTS if name != tag}
    assert others == {name: _full()[name] for name in others}
