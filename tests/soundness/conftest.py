"""The soundness corpus graded once per test session, shared by every test that judges it.

A new test reads the grading by taking `corpus_run` as an argument (docs/SOUNDNESS.md); under
pytest-xdist every such test runs on one worker (tests/xdist_groups.py), so the corpus is graded once.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from soundness_grading import CorpusRun, grade_corpus
from soundness_spec import load_cases

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    """Every corpus notebook graded once (two at a time), with the reports in a temporary folder."""
    return grade_corpus(load_cases(), out_dir=tmp_path_factory.mktemp("soundness-reports"))


@pytest.fixture(scope="session")
def part1_run(tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    """Part 1's corpus (tests/assignments/attention_encoder/fixtures) graded once, unit parts only."""
    spec = importlib.util.spec_from_file_location("soundness_bench", ROOT / "bench" / "soundness.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    # bench/soundness.py puts Part 1's corpus helpers (ae_corpus) on sys.path itself.

    cases = bench.part1_cases(tmp_path_factory.mktemp("part1-submissions"))
    return grade_corpus(
        cases, out_dir=tmp_path_factory.mktemp("part1-reports"), overrides={"assignment.name": bench.PART1}
    )
