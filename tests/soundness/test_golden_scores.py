"""Part 2's scores on the soundness corpus and the examples match the golden file, check by check."""

from __future__ import annotations

import pytest
from golden_scores import differences, example_key, example_paths, grade_examples, load_golden, score_table
from soundness_grading import CorpusRun
from soundness_spec import load_cases

EXAMPLE_PREFIX = "examples/"


def test_golden_file_covers_every_corpus_case_and_example() -> None:
    golden = load_golden()
    expected = {case.id for case in load_cases()} | {example_key(path) for path in example_paths()}
    assert sorted(golden) == sorted(expected)
    assert all(entry["checks"] and entry["parts"] for entry in golden.values())


def test_differences_name_the_notebook_and_the_check() -> None:
    golden = {"a": {"status": "graded", "parts": {"p": 2.0}, "checks": {"c1": 1.0, "c2": 1.0}}}
    current = {"a": {"status": "graded", "parts": {"p": 1.0}, "checks": {"c1": 1.0, "c2": 0.0}}, "b": golden["a"]}
    assert differences(golden, current) == [
        "b: not in the golden file",
        "a: part p 2.0 -> 1.0",
        "a: check c2 1.0 -> 0.0",
    ]
    assert differences(golden, golden) == []


# The corpus is graded once per session by the `corpus_run` fixture (conftest.py), shared with
# test_soundness.py; the limit is the same hang guard.
@pytest.mark.e2e
@pytest.mark.timeout(3600)
def test_corpus_scores_match_the_golden_file(corpus_run: CorpusRun) -> None:
    golden = {key: entry for key, entry in load_golden().items() if not key.startswith(EXAMPLE_PREFIX)}
    found = differences(golden, score_table(corpus_run.results))
    checks = sum(len(entry["checks"]) for entry in golden.values())
    assert found == [], f"{len(found)} differences over {len(golden)} notebooks, {checks} checks:\n" + "\n".join(found)


@pytest.mark.e2e
@pytest.mark.timeout(1200)
def test_example_scores_match_the_golden_file() -> None:
    golden = {key: entry for key, entry in load_golden().items() if key.startswith(EXAMPLE_PREFIX)}
    found = differences(golden, score_table(grade_examples()))
    assert found == [], "\n".join(found)
