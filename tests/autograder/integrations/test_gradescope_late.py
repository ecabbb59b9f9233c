"""Gradescope route: the submission time and due date come from submission_metadata.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from autograder.integrations.gradescope.run import grade_upload, upload_time

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def gradescope_layout(root: Path, metadata: Path | None) -> tuple[Path, Path]:
    """/autograder's layout under root: an empty submission/ (nothing to grade), the metadata beside it."""
    (root / "submission").mkdir(parents=True)
    if metadata is not None:
        shutil.copyfile(metadata, root / "submission_metadata.json")
    config = root / "grader.yml"
    text = (FIXTURES / "results" / "grader.yml").read_text(encoding="utf-8")
    config.write_text(text + "\nlate:\n  deadline: 2026-12-05T00:00:00+09:00\n  penalty_per_unit: 0.1\n")
    return root / "submission", config


def test_the_metadata_due_date_replaces_the_deadline_and_is_stored(tmp_path):
    submission, config = gradescope_layout(tmp_path, FIXTURES / "late" / "submission_metadata.json")
    result = grade_upload(submission, tmp_path / "results" / "results.json", config)
    assert result.late is not None
    # created_at 2026-12-02T16:30+09:00, Gradescope's due date 2026-12-02T00:00+09:00: one started day.
    assert (result.late["deadline_source"], result.late["units_late"]) == ("route", 1)
    assert result.late["time_source"] == "gradescope"
    document = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    assert "1일 늦었습니다" in document["output"]


def test_missing_or_broken_metadata_means_an_unknown_time_graded_as_on_time(tmp_path):
    submission, config = gradescope_layout(tmp_path, None)
    result = grade_upload(submission, tmp_path / "results" / "results.json", config)
    assert result.late is not None and result.late["submitted_at"] == "" and result.late["units_late"] == 0
    broken = tmp_path / "broken.json"
    broken.write_text('{"created_at": "yesterday"}', encoding="utf-8")
    assert upload_time(broken).source == "unknown"
