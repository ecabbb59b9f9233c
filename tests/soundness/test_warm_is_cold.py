"""Workers forked from the zygote (warm) and started cold give the same scores on Part 1's corpus.

Part 1's session grading (`part1_run`: warm, the default as root) against the same cases graded
cold, check by check. Part 2's corpus graded cold is held to the golden file instead
(test_cold_is_golden.py), which the session's warm grading (`corpus_run`) matches by
test_golden_scores.py: this file checks that `corpus_run` is indeed the warm one. Using
`corpus_run` also keeps this file on the worker that builds it and `part1_run` (tests/xdist_groups.py
groups a file by the costliest shared fixture it uses), so `part1_run` is built once per run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from golden_scores import differences, score_table
from soundness_grading import CorpusRun, grade_corpus

from autograder.sandbox import Limits
from autograder.sandbox.plan import choose_isolation

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(3600),
    pytest.mark.skipif(
        os.geteuid() != 0 or choose_isolation(Limits()) != "namespace", reason="the warm start is for the root jail"
    ),
]


def _graded_cold(run: CorpusRun, folder: Path) -> CorpusRun:
    """The same cases as `run`, with the same assignment and configuration, each worker started cold."""
    overrides = {"assignment.name": run.config.assignment.name, "worker.warm_start": False}
    return grade_corpus(run.cases, out_dir=folder, overrides=overrides)


def test_part1_corpus_scores_the_same_warm_and_cold(
    corpus_run: CorpusRun, part1_run: CorpusRun, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The session's gradings are the warm ones: Part 2's is compared (through the golden file) with
    # its cold grading in test_cold_is_golden.py, Part 1's here.
    assert corpus_run.config.worker.warm_start and part1_run.config.worker.warm_start
    cold = _graded_cold(part1_run, tmp_path_factory.mktemp("cold-reports"))
    assert not cold.config.worker.warm_start
    warm_table, cold_table = score_table(part1_run.results), score_table(cold.results)
    checks = sum(len(entry["checks"]) for entry in warm_table.values())
    found = differences(warm_table, cold_table)
    summary = f"{len(found)} differences over {len(warm_table)} notebooks, {checks} checks"
    assert found == [], summary + ":\n" + "\n".join(found)
