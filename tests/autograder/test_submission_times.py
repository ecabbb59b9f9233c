"""Submission times: collect_submissions' manifest, Gradescope's metadata, the labelled mtime fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.config import LateConfig
from autograder.late import SOURCE_FILE_MTIME, SOURCE_GIT_COMMIT, SOURCE_GRADESCOPE, SOURCE_TIMES_FILE, SOURCE_UNKNOWN
from autograder.submission_times import TimesError, gradescope_time, read_times_file, submission_times

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "late"


def test_the_manifest_gives_commit_times_by_file_name():
    times = read_times_file(FIXTURES / "manifest.csv")
    assert sorted(times) == ["alice.ipynb", "bob.ipynb"]  # carol's row has no commit
    assert times["bob.ipynb"].submitted_at == "2026-12-03T10:00:00+09:00"
    assert times["bob.ipynb"].source == SOURCE_GIT_COMMIT


def test_another_time_column_is_a_times_file_source(tmp_path):
    path = tmp_path / "times.csv"
    path.write_text("name,handed_in\nalice.ipynb,2026-12-01T10:00:00Z\n", encoding="utf-8")
    time = read_times_file(path, "name", "handed_in")["alice.ipynb"]
    assert (time.source, time.detail) == (SOURCE_TIMES_FILE, "times.csv: handed_in")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("file,commit_date\na.ipynb,2026-12-01T10:00:00\n", "no time zone"),
        ("file,commit_date\na.ipynb,2026-12-01T10:00:00Z\nx/a.ipynb,2026-12-02T10:00:00Z\n", "appears twice"),
        ("file,when\na.ipynb,2026-12-01T10:00:00Z\n", "needs the columns"),
    ],
)
def test_unusable_times_files_are_refused(tmp_path, text, message):
    path = tmp_path / "times.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TimesError, match=message):
        read_times_file(path)


def test_gradescope_metadata_gives_created_at_and_the_due_date(tmp_path):
    time = gradescope_time(FIXTURES / "submission_metadata.json")
    assert (time.submitted_at, time.source) == ("2026-12-02T16:30:00.000000+09:00", SOURCE_GRADESCOPE)
    assert time.due == "2026-12-02T00:00:00.000000+09:00"
    metadata = json.loads((FIXTURES / "submission_metadata.json").read_text(encoding="utf-8"))
    metadata["users"][0]["assignment"] = {"due_date": "2026-12-05T00:00:00+09:00"}  # an extension
    (tmp_path / "m.json").write_text(json.dumps(metadata), encoding="utf-8")
    assert gradescope_time(tmp_path / "m.json").due == "2026-12-05T00:00:00+09:00"
    assert gradescope_time(tmp_path / "missing.json").source == SOURCE_UNKNOWN


def test_the_modification_time_is_used_only_when_asked_and_says_so(tmp_path):
    path = tmp_path / "dana.ipynb"
    path.write_text("{}", encoding="utf-8")
    manifest = str(FIXTURES / "manifest.csv")
    plain = submission_times({"dana": path, "alice": tmp_path / "alice.ipynb"}, LateConfig(times_file=manifest))
    assert plain["dana"].source == SOURCE_UNKNOWN and plain["alice"].source == SOURCE_GIT_COMMIT
    fallback = submission_times({"dana": path}, LateConfig(times_file=manifest, use_file_mtime=True))
    assert fallback["dana"].source == SOURCE_FILE_MTIME and fallback["dana"].submitted_at
