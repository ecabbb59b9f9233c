"""Late work in the reports: the student's sentences (Korean by default), gradebook columns, Gradescope score."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.config import LateConfig, load_config
from autograder.i18n import use_language
from autograder.late import SOURCE_GIT_COMMIT, SubmissionTime, apply_late_policy
from autograder.reports.common import format_score
from autograder.reports.gradebook import LATE_COLUMNS, render_gradebook
from autograder.reports.gradescope import gradescope_results
from autograder.reports.late_text import late_lines
from autograder.reports.markdown import render_submission
from autograder.reports.submission_json import read_submission_json
from autograder.reports.table import render_report

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts
POLICY = LateConfig(deadline="2026-12-01T23:59:59+09:00", penalty_per_unit=0.1)


def late_result(moment: str = "2026-12-03T10:00:00+09:00"):
    result = read_submission_json(FIXTURES / "partial.json")
    apply_late_policy(result, SubmissionTime(moment, SOURCE_GIT_COMMIT, "manifest.csv: commit_date"), POLICY)
    return result


def test_a_late_report_says_when_how_late_and_the_penalty_in_korean():
    result = late_result()
    raw = result.late["raw_points"]
    with use_language("ko"):
        lines = late_lines(result)
        markdown = render_submission(result)
    assert lines[0] == (
        "2026-12-03 10:00 (UTC+09:00)에 제출되어 마감(2026-12-01 23:59 (UTC+09:00))보다 2일 늦었습니다"
        "(제출 시각 출처: git 커밋 시각)."
    )
    assert lines[1].startswith(f"지각 감점 20%: 채점 점수 {raw:g}점에서")
    assert "**제출 기한**" in markdown and lines[1] in markdown


def test_english_and_the_unknown_and_on_time_cases():
    with use_language("en"):
        assert "2 day(s) after the deadline" in late_lines(late_result())[0]
    unknown = read_submission_json(FIXTURES / "partial.json")
    apply_late_policy(unknown, SubmissionTime(), POLICY)
    on_time = late_result("2026-12-01T20:00:00+09:00")
    with use_language("ko"):
        assert late_lines(unknown) == [
            "제출 시각을 알 수 없어 기한 내 제출로 처리했습니다(마감: 2026-12-01 23:59 (UTC+09:00))."
        ]
        assert late_lines(on_time)[0].endswith(
            "기한을 지켰습니다(마감: 2026-12-01 23:59 (UTC+09:00), 제출 시각 출처: git 커밋 시각)."
        )
    assert late_lines(read_submission_json(FIXTURES / "partial.json")) == []


def test_the_gradebook_shows_raw_penalty_and_final_points_only_when_a_deadline_applied():
    plain = read_submission_json(FIXTURES / "full_marks.json")
    assert "final_points" not in render_gradebook([plain], PARTS)
    late = late_result()
    text = render_gradebook([late, plain], PARTS)
    header = text.splitlines()[0].split(",")
    assert header[-len(LATE_COLUMNS) :] == LATE_COLUMNS
    row = next(r for r in csv.DictReader(io.StringIO(text)) if r["file"] == late.submission)
    raw = late.late["raw_points"]
    assert row["submitted_at"] == "2026-12-03T10:00:00+09:00" and row["time_source"] == SOURCE_GIT_COMMIT
    assert float(row["raw_points"]) == raw == float(row["total_points_earned"])
    assert abs(float(row["late_penalty"]) - 0.2 * raw) < 0.01
    assert abs(float(row["final_points"]) - 0.8 * raw) < 0.01
    untimed = next(r for r in csv.DictReader(io.StringIO(text)) if r["file"] == plain.submission)
    assert untimed["late_penalty"] == "0" and untimed["final_points"] == untimed["total_points_earned"]


def test_gradescope_scores_the_final_points_and_explains_them():
    late = late_result()
    with use_language("ko"):
        document = gradescope_results(late, PARTS)
    assert document["score"] == late.late["final_points"] < late.late["raw_points"]
    assert "지각 감점 20%" in document["output"]


def test_the_terminal_table_adds_a_line_per_penalised_submission():
    late, on_time = late_result(), late_result("2026-12-01T20:00:00+09:00")
    on_time.submission = "on_time.ipynb"
    text = render_report([late, on_time], PARTS, width=120)
    raw, final = late.late["raw_points"], late.late["final_points"]
    penalised = [line for line in text.splitlines() if "penalty" in line]
    assert penalised == [f"{late.submission}: {late_lines(late)[-1]}"]
    assert f"{raw:g}" in penalised[0] and f"{final:g}" in penalised[0]


def test_the_report_heading_shows_the_graded_points_and_the_final_ones():
    """Not 62/80 alone while the final score is 49.6: both, said as such."""
    late = late_result()
    raw, final = late.late["raw_points"], late.late["final_points"]
    with use_language("ko"):
        heading = render_submission(late).splitlines()[0]
    assert f"채점 {format_score(raw, 80)}, 지각 감점 뒤 최종 {final:g}점" in heading, heading
    on_time = late_result("2026-12-01T20:00:00+09:00")
    assert "최종" not in render_submission(on_time).splitlines()[0]
