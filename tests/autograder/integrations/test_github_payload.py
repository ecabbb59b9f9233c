"""Reporter payloads decode to per-part scores that add up to the CLI's total; Actions file formats."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from workflow_tools import EXAMPLE_NAMES, ROOT, decode_payload, read_outputs

from autograder.integrations.github import (
    SUMMARY_LIMIT_BYTES,
    append_summary,
    cap_summary,
    format_output,
    write_outputs,
)
from autograder.reports.reporter_payload import (
    encode_payload,
    part_payloads,
    reporter_env_name,
    runner_id,
    runner_payload,
)
from autograder.reports.submission_json import read_submission_json

RESULTS = ROOT / "tests" / "fixtures" / "results"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_payloads_add_up_to_the_cli_total(graded_examples: Path, name: str) -> None:
    out = graded_examples / "grading-output"
    document = json.loads((out / f"{name}.reporter.json").read_text(encoding="utf-8"))
    cli = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
    with (out / "gradebook.csv").open(encoding="utf-8-sig") as handle:
        row = next(r for r in csv.DictReader(handle) if r["file"] == f"{name}.ipynb")
    per_part = {}
    for runner in document["runners"].split(","):
        payload = decode_payload(document["env"][reporter_env_name(runner)])
        assert payload == document["payloads"][runner] and payload["version"] == 1
        per_part[runner] = sum(test["score"] for test in payload["tests"])
    graded = {p["part"]: p["points"] for p in cli["parts"] if not all(c["skipped"] for c in p["checks"])}
    assert per_part == graded  # one runner per graded part, same points
    assert sum(per_part.values()) == cli["points"] == float(row["total_points_earned"]) == document["total"]
    assert "training" not in per_part  # skipped parts are not reported as 0


def test_buggy_example_fails_exactly_its_two_parts(graded_examples: Path) -> None:
    document = json.loads(
        (graded_examples / "grading-output" / "buggy_original_format.reporter.json").read_text(encoding="utf-8")
    )
    statuses = {runner: payload["status"] for runner, payload in document["payloads"].items()}
    assert {r for r, s in statuses.items() if s != "pass"} == {"look_ahead_mask", "masked_loss"}


def test_grader_error_results_are_errors_worth_nothing() -> None:
    result = read_submission_json(RESULTS / "grader_error.json")
    payloads = part_payloads(result)
    assert {p["status"] for p in payloads.values()} == {"error"}
    assert sum(t["score"] for p in payloads.values() for t in p["tests"]) == result.points == 0


def test_payload_round_trip_and_ids() -> None:
    payload = runner_payload([{"name": "ä", "status": "pass", "score": 1.5}], 2)
    encoded = encode_payload(payload)
    assert "\n" not in encoded and decode_payload(encoded) == payload
    assert runner_id("Look-ahead mask") == "look-ahead_mask" and runner_id("1st") == "_1st"
    assert reporter_env_name("look_ahead_mask") == "LOOK_AHEAD_MASK_RESULTS"


def test_outputs_use_heredocs_for_multiline_values(tmp_path: Path) -> None:
    target = tmp_path / "output"
    write_outputs(target, {"runners": "q1,q2", "reporter-env": "Q1_RESULTS=a\nQ2_RESULTS=b"})
    assert read_outputs(target) == {"runners": "q1,q2", "reporter-env": "Q1_RESULTS=a\nQ2_RESULTS=b"}
    assert format_output("x", "1") == "x=1\n"
    write_outputs(None, {"ignored": "outside Actions"})


def test_summary_is_cut_to_githubs_limit(tmp_path: Path) -> None:
    huge = "| row |\n" * (SUMMARY_LIMIT_BYTES // 4)
    capped = cap_summary(huge)
    assert len(capped.encode("utf-8")) <= SUMMARY_LIMIT_BYTES and capped.endswith("artifacts)_\n")
    assert cap_summary("small\n") == "small\n"
    summary = tmp_path / "summary.md"
    append_summary(summary, "one\n")
    append_summary(summary, "two\n")
    assert summary.read_text(encoding="utf-8") == "one\ntwo\n"
