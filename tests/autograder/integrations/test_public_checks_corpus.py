"""The public checks (student_template/tests) on held-out notebooks: common bugs caught, correct notebooks passed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from autograder.integrations.public_checks import CheckOutcome, run_public_checks

ROOT = Path(__file__).resolve().parents[3]
PUBLIC_TESTS = ROOT / "student_template" / "tests"
FIXTURES = ROOT / "tests" / "fixtures" / "public_checks"

CASES = yaml.safe_load((FIXTURES / "cases.yaml").read_text(encoding="utf-8"))["cases"]
BUGS = [case for case in CASES if case["expect"]]
CORRECT = [case for case in CASES if not case["expect"]]
HANGUL = re.compile("[\uac00-\ud7a3]")
REQUIRED_CAUGHT = 7


@pytest.fixture(scope="session")
def public_outcomes() -> dict[str, dict[str, CheckOutcome]]:
    """Every held-out notebook through the public checks once: case id -> question -> outcome."""
    results = {}
    for case in CASES:
        outcomes, _problems = run_public_checks(FIXTURES / f"{case['id']}.ipynb", PUBLIC_TESTS)
        results[case["id"]] = {outcome.name: outcome for outcome in outcomes}
    return results


def test_the_held_out_corpus_has_eight_bugs_and_correct_notebooks_in_both_formats() -> None:
    assert len(BUGS) == 8
    assert {case["base"] for case in CORRECT} == {"original", "new"}
    assert {case["base"] for case in BUGS} == {"original", "new"}
    assert sorted(p.name for p in FIXTURES.glob("*.ipynb")) == sorted(f"{c['id']}.ipynb" for c in CASES)


def test_at_least_seven_of_the_eight_common_bugs_fail_their_own_check(public_outcomes) -> None:
    caught = [case["id"] for case in BUGS if not public_outcomes[case["id"]][case["expect"]].passed]
    missed = sorted({case["id"] for case in BUGS} - set(caught))
    assert len(caught) >= REQUIRED_CAUGHT, f"caught {len(caught)}/{len(BUGS)}; missed {missed}"


@pytest.mark.parametrize("case", BUGS, ids=lambda case: case["id"])
def test_a_caught_bug_costs_only_its_own_check_and_is_explained_in_korean(case, public_outcomes) -> None:
    outcomes = public_outcomes[case["id"]]
    failed = sorted(name for name, outcome in outcomes.items() if not outcome.passed)
    if case["expect"] not in failed:
        pytest.skip(f"{case['id']} is the bug the public checks may miss")  # counted by the test above
    assert failed == [case["expect"]], f"{case['id']} also fails {failed}"
    messages = [c.message for c in outcomes[case["expect"]].cases if not c.passed]
    assert messages and all(HANGUL.search(message) for message in messages)


@pytest.mark.parametrize("case", CORRECT, ids=lambda case: case["id"])
def test_a_correct_notebook_passes_every_public_check(case, public_outcomes) -> None:
    outcomes = public_outcomes[case["id"]]
    failed = {
        name: [c.message[:300] for c in o.cases if not c.passed] or o.error
        for name, o in outcomes.items()
        if not o.passed
    }
    assert failed == {}
    assert sorted(outcomes) == ["q1", "q2", "q3", "q4", "q5"]


def test_the_public_checks_use_no_hidden_code_or_reference_values() -> None:
    for path in sorted(PUBLIC_TESTS.glob("q*.py")):
        text = path.read_text(encoding="utf-8")
        for hidden in ("autograder", "reference", "mtkit", "safetensors"):
            assert hidden not in text, f"{path.name} mentions {hidden}"
