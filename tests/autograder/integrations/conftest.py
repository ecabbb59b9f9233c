"""Shared fixtures of the integration tests: the example notebooks graded once, by the workflow's step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from workflow_tools import EXAMPLE_NAMES, EXAMPLES, INSTRUCTOR_WORKFLOW, ROOT, load_workflow, run_step


@pytest.fixture(scope="session")
def graded_examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The instructor workflow's `grade` step, run as is on the three example notebooks.

    Returns:
        The checkout folder; the reports are in its grading-output/.
    """
    checkout = tmp_path_factory.mktemp("instructor-checkout")  # the grader comes via PYTHONPATH
    notebooks = checkout / "submissions" / "notebooks"
    notebooks.mkdir(parents=True)
    for name in EXAMPLE_NAMES:
        shutil.copyfile(EXAMPLES / f"{name}.ipynb", notebooks / f"{name}.ipynb")
    done = run_step(
        load_workflow(INSTRUCTOR_WORKFLOW), "grade", "grade", checkout, {"inputs.jobs": "2"}, {"PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return checkout
