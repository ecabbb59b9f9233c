"""The hidden-check runner: the torch thread count the checks run under, and the verdicts it collects."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.checks.support import CheckContext
from autograder.runner import CHECK_THREADS, run_checks

CHECKS = """
import torch


def test_threads():
    assert torch.get_num_threads() == {threads}


def test_failing():
    assert False
"""


@pytest.fixture
def checks_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "checks"
    folder.mkdir()
    (folder / "test_runner_probe.py").write_text(CHECKS.format(threads=CHECK_THREADS), encoding="utf-8")
    return folder


def test_checks_run_with_the_check_threads_and_the_count_is_restored(checks_dir: Path) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        verdicts = run_checks(checks_dir, CheckContext(student=None, seed=0))  # type: ignore[arg-type]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert verdicts["threads"].passed
    assert not verdicts["failing"].passed
