"""Set-up B: the student workflow needs nothing but GitHub Actions; the Classroom reporter is an opt-in legacy job."""

from __future__ import annotations

import json

from workflow_tools import STUDENT_WORKFLOW, load_workflow


def test_the_checks_job_uses_no_classroom_service_and_no_secret() -> None:
    job = load_workflow(STUDENT_WORKFLOW)["jobs"]["public-checks"]
    text = json.dumps(job)
    assert "classroom" not in text.lower() and "secrets." not in text
    assert "needs" not in job and "if" not in job  # runs on every push by itself
    uses = [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step]
    assert set(uses) <= {"actions/checkout", "actions/setup-python", "actions/upload-artifact"}


def test_the_reporter_job_is_labelled_legacy_and_off_unless_asked_for() -> None:
    job = load_workflow(STUDENT_WORKFLOW)["jobs"]["classroom-reporter"]
    assert "legacy" in job["name"].lower()
    assert "vars.AUTOGRADING_REPORTER == 'true'" in job["if"]
    reporter = "classroom-resources/autograding-grading-reporter@"
    assert any(step.get("uses", "").startswith(reporter) for step in job["steps"])
