"""Part 1's soundness corpus spec (fixtures/cases.yaml): well formed, covering every fixture; the
cheats and faults graded through the real sandboxed worker (slow)."""

from __future__ import annotations

import pytest
from ae_corpus import FOLDERS, KINDS, CorpusCase, cases_of, fixture_files, load_cases
from ae_suite_runner import parts, points, run_suite

from assignments.attention_encoder import training
from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS
from assignments.attention_encoder.checks.helpers import HELPERS_SOURCE
from assignments.attention_encoder.settings import training_settings
from autograder import credit
from autograder.config import load_config
from autograder.config.sections import PartConfig
from autograder.runner import Verdict
from autograder.sandbox import Limits, Worker


def test_the_spec_is_well_formed_and_covers_every_fixture() -> None:
    cases = load_cases()
    assert len({c.id for c in cases}) == len(cases)
    for case in cases:
        assert case.kind in KINDS, case.id
        assert case.tag is None or case.tag in parts(), case.id
        assert case.fixture.startswith(FOLDERS[case.kind] + "/"), case.id
        assert case.description, case.id
        assert (case.cap is not None) == (case.kind == "degenerate"), case.id
        assert all(part in parts() for part in (*case.max_points, *case.affected)), case.id
        compile(case.source(), case.id, "exec")
    assert {c.fixture for c in cases} == fixture_files()


def _grade_in_sandbox(source: str, timeout_s: float) -> dict[str, float]:
    return points(_verdicts_in_sandbox(source, timeout_s))


# The library calls the engine watches for Part 1's unit parts (each part declares the same list).
WATCHED = PartConfig.model_validate(parts()["attention"]).forbidden_calls


def _verdicts_in_sandbox(
    source: str, timeout_s: float, calls: dict[str, tuple[str, ...]] | None = None
) -> dict[str, str | None]:
    limits = Limits(timeout_s=timeout_s)
    with Worker(source, limits, GRADER_GLOBALS, helpers_source=HELPERS_SOURCE, watch=WATCHED) as worker:
        return run_suite(worker, calls=calls)


def _training_is_graded(verdicts: dict[str, str | None], calls: dict[str, tuple[str, ...]]) -> bool:
    """The engine's rule: the training part runs only when the parts it trains passed their gates."""
    table = {name: PartConfig.model_validate(raw) for name, raw in parts().items()}
    held = {check: Verdict(m is None, m or "", library_calls=calls.get(check, ())) for check, m in verdicts.items()}
    return not credit.unmet_requirements("training", table, list(table), held)


def _full() -> dict[str, float]:
    return {name: float(part["points"]) for name, part in parts().items() if name != "training"}


@pytest.mark.slow
@pytest.mark.parametrize("case", cases_of("cheat"), ids=lambda c: c.id)
def test_a_cheat_earns_nothing_it_did_not_work_for(case: CorpusCase) -> None:
    limits = case.max_points
    calls: dict[str, tuple[str, ...]] = {}
    verdicts = _verdicts_in_sandbox(case.source(), timeout_s=30, calls=calls)
    got = points(verdicts, calls)
    if "training" in limits and not _training_is_graded(verdicts, calls):
        got["training"] = 0.0
    elif "training" in limits:
        settings = training_settings(load_config(None, {"assignment.name": "attention_encoder"}))
        budget = settings.time_budget_s + 30
        with Worker(case.source(), Limits(timeout_s=budget), GRADER_GLOBALS, helpers_source=HELPERS_SOURCE) as worker:
            got["training"] = (
                float(parts()["training"]["points"])
                if training.run_training_part(worker, training=settings).passed
                else 0.0
            )
    for part, cap in limits.items():
        assert got[part] <= cap, (part, got)
    assert {k: v for k, v in got.items() if k not in limits} == {k: v for k, v in _full().items() if k not in limits}


@pytest.mark.slow
@pytest.mark.parametrize("case", cases_of("fault"), ids=lambda c: c.id)
def test_a_fault_costs_only_the_parts_it_happens_in(case: CorpusCase) -> None:
    # Unit parts only: the training part (named in `affected` where the fault reaches it) would
    # spend its whole budget on a hang.
    affected = set(case.affected)
    # 10 s per request: a hang costs that much per request, and an honest request of another part
    # still finishes well inside it on a loaded machine (5 s was exceeded at load ~38).
    got = _grade_in_sandbox(case.source(), timeout_s=10)
    assert {k: v for k, v in got.items() if k not in affected} == {
        k: v for k, v in _full().items() if k not in affected
    }
    for part in affected - {"training"}:
        assert got[part] < _full()[part], (part, got)
