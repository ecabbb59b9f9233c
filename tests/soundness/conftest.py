"""The soundness corpus graded once per test session, shared by every test that judges it.

A new test reads the grading by taking `corpus_run` as an argument (docs/SOUNDNESS.md); under
pytest-xdist every such test runs on one worker (tests/xdist_groups.py), so the corpus is graded once.
"""

from __future__ import annotations

import pytest
from soundness_grading import CorpusRun, grade_corpus
from soundness_spec import load_cases


@pytest.fixture(scope="session")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    """Every corpus notebook graded once (two at a time), with the reports in a temporary folder."""
    return grade_corpus(load_cases(), out_dir=tmp_path_factory.mktemp("soundness-reports"))
