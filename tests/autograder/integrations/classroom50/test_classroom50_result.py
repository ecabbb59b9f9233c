"""result/v1 documents: the vendored schema, integer points, the release body and the step outputs."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path

import pytest

from autograder.i18n import use_language
from autograder.integrations.classroom50.result_v1 import (
    Identity,
    PartOutcome,
    fenced,
    make_result,
    release_body,
    status_and_summary,
    utc_stamp,
    whole_points,
)
from autograder.integrations.classroom50.schema import SCHEMA_PATH, result_problems
from autograder.integrations.github import write_outputs

IDENTITY = Identity(
    "transformers-2026",
    "transformer-mt",
    "alice",
    "submit/20261201T120000Z-abc1234",
    "https://github.com/course/transformers-2026-transformer-mt-alice/commit/abc1234",
    "https://github.com/course/transformers-2026-transformer-mt-alice/releases/tag/submit%2F20261201T120000Z-abc1234",
    "https://github.com/course/transformers-2026-transformer-mt-alice/commit/abc1234",
    "2026-12-01T12:00:00Z",
)
PARTS = [
    PartOutcome("look_ahead_mask", "Look-ahead 마스크", 10.0, 10.0, True),
    PartOutcome("decoder_layer", "DecoderLayer", 6.666, 20.0, False, "test_q2_shape: 모양이 다릅니다"),
]


def test_the_vendored_schema_names_its_source_and_is_closed() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert "foundation50/classroom50" in schema["$comment"] and "6e593c79" in schema["$comment"]
    assert schema["additionalProperties"] is False and schema["title"] == "classroom50/result/v1"


def test_one_test_per_part_with_integer_points_is_valid() -> None:
    document = make_result(IDENTITY, PARTS)
    assert result_problems(document) == []
    assert [t["test-name"] for t in document["tests"]] == ["Look-ahead 마스크", "DecoderLayer"]
    assert [(t["score"], t["max-score"]) for t in document["tests"]] == [(10, 10), (6, 20)]
    assert (document["score"], document["max-score"]) == (16, 30)
    assert document["tests"][1]["message"].startswith("test_q2_shape")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.update(extra=1), "Additional properties"),
        (lambda d: d.update(score=1.5), "is not of type 'integer'"),
        (lambda d: d.update(datetime="2026-12-01T12:00:00+09:00"), "does not match"),
        (lambda d: d.update(submission="v1"), "does not match"),
        (lambda d: d.pop("owner"), "'owner' is a required property"),
        (lambda d: d.update(score=31), "score 31 > max-score 30"),
        (lambda d: d["tests"][0].update(score=11), "score 11 > max-score 10"),
        (lambda d: d.update(score=15), "not the sum"),
    ],
)
def test_the_checker_rejects_what_classroom50_rejects(change, problem: str) -> None:
    document = copy.deepcopy(make_result(IDENTITY, PARTS))
    change(document)
    assert any(problem in p for p in result_problems(document)), result_problems(document)


@pytest.mark.parametrize(
    ("earned", "possible", "expected"),
    [
        (10, 10, (10, 10)),
        (9.9999999999, 10, (10, 10)),
        (6.7, 20, (6, 20)),
        (-1, 5, (0, 5)),
        (12, 10, (10, 10)),
        (float("nan"), 5, (0, 5)),
        (2.5, 2.5, (2, 2)),
    ],
)
def test_whole_points_never_exceed_what_was_earned_or_available(earned, possible, expected) -> None:
    assert whole_points(earned, possible) == expected


def test_utc_stamp_converts_offsets_to_z() -> None:
    assert utc_stamp(datetime.fromisoformat("2026-12-02T08:59:59+09:00")) == "2026-12-01T23:59:59Z"


def test_release_body_is_korean_and_fences_student_text() -> None:
    hostile = PartOutcome("decoder", "Decoder", 0, 20, False, "```\n<script>alert(1)</script>\n# heading")
    with use_language("ko"):
        document = make_result(IDENTITY, [*PARTS, hostile])
        body = release_body(document, "classroom50.public.title", ["공개 검사만"], [])
        status, summary = status_and_summary(document)
    assert body.startswith("### 공개 검사: 16/50점")
    assert "| Look-ahead 마스크 | ✅ 통과 | 10/10 |" in body and "| Decoder | ❌ 실패 | 0/20 |" in body
    block = fenced(hostile.message)
    assert block[0] == "````text" and "\n".join(block) in body  # the fence outlasts the student's ```
    assert (status, summary) == ("failure", "16/50점 (1/3 파트 통과)")


def test_status_lines_are_appended_to_github_output(tmp_path: Path) -> None:
    output = tmp_path / "output"
    output.write_text("earlier=1\n", encoding="utf-8")
    write_outputs(str(output), {"status": "success", "summary": "10/10점 (모든 파트 통과)"})
    assert output.read_text(encoding="utf-8") == "earlier=1\nstatus=success\nsummary=10/10점 (모든 파트 통과)\n"
