"""The whole soundness corpus graded through the real engine and sandboxed workers, case by case."""

from __future__ import annotations

import pytest
from soundness_grading import CorpusRun, judge, result_summary
from soundness_spec import Case, load_cases

from autograder.results import STATUS_ERROR

CASES = load_cases()
# Grading the corpus once (two notebooks at a time) takes minutes; it happens in the session
# fixture `corpus_run` (conftest.py). The limit is a hang guard: every request inside has its own
# timeout, and on a loaded 2-core machine the whole run took over 20 minutes.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]


def _of(kind: str) -> list[Case]:
    return [case for case in CASES if case.kind == kind]


def _check(case: Case, run: CorpusRun) -> None:
    result = run.results[case.id]
    verdict = judge(case, result, run)
    assert verdict.ok, f"{case.id} ({case.description}) -> {result_summary(result)}: " + "; ".join(verdict.problems)


@pytest.mark.parametrize("case", _of("mutant"), ids=lambda case: case.id)
def test_mutant_loses_points_on_its_part_only(case: Case, corpus_run: CorpusRun) -> None:
    _check(case, corpus_run)


@pytest.mark.parametrize("case", _of("alternative"), ids=lambda case: case.id)
def test_alternative_keeps_full_marks(case: Case, corpus_run: CorpusRun) -> None:
    _check(case, corpus_run)


@pytest.mark.parametrize("case", _of("cheat"), ids=lambda case: case.id)
def test_cheat_gains_nothing(case: Case, corpus_run: CorpusRun) -> None:
    _check(case, corpus_run)


@pytest.mark.parametrize("case", _of("fault"), ids=lambda case: case.id)
def test_fault_costs_only_its_part_with_a_reason(case: Case, corpus_run: CorpusRun) -> None:
    _check(case, corpus_run)


@pytest.mark.parametrize("case", _of("degenerate"), ids=lambda case: case.id)
def test_degenerate_answer_keeps_only_structural_points(case: Case, corpus_run: CorpusRun) -> None:
    _check(case, corpus_run)


def test_batch_grades_every_notebook_without_grader_errors(corpus_run: CorpusRun) -> None:
    assert sorted(corpus_run.results) == sorted(case.id for case in CASES)
    errors = [case_id for case_id, result in corpus_run.results.items() if result.status == STATUS_ERROR]
    assert errors == []


def test_nothing_written_by_submissions_reaches_the_host_or_the_reports(corpus_run: CorpusRun) -> None:
    assert corpus_run.planted_files == []
    assert corpus_run.report_mismatches == []
