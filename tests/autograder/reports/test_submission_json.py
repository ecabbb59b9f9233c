"""Per-submission JSON: stable layout, timing isolated in grading_seconds, strict JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from autograder.reports.submission_json import read_submission_json, submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


@pytest.mark.parametrize("name", ["full_marks", "partial", "trained", "grader_error", "unreadable"])
def test_fixture_round_trips_byte_for_byte(name):
    original = (FIXTURES / f"{name}.json").read_text(encoding="utf-8")
    assert submission_json(read_submission_json(FIXTURES / f"{name}.json")) == original


def test_two_gradings_differ_only_in_grading_seconds():
    first = read_submission_json(FIXTURES / "partial.json")
    second = dataclasses.replace(first, grading_seconds=first.grading_seconds + 3.14159)
    lines_a, lines_b = submission_json(first).splitlines(), submission_json(second).splitlines()
    differing = [(a, b) for a, b in zip(lines_a, lines_b, strict=False) if a != b]
    assert len(lines_a) == len(lines_b)
    assert [a.split(":")[0].strip() for a, _ in differing] == ['"grading_seconds"']
    assert json.loads(submission_json(second))["grading_seconds"] == 23.642


def test_keys_are_sorted_at_every_level():
    data = json.loads(submission_json(read_submission_json(FIXTURES / "partial.json")))
    assert list(data) == sorted(data)
    assert list(data["parts"][0]["checks"][0]) == sorted(data["parts"][0]["checks"][0])


def test_non_finite_numbers_still_give_strict_json():
    result = read_submission_json(FIXTURES / "trained.json")
    result.extras["training"]["bleu"] = math.nan
    result.extras["loss"] = [math.inf, -math.inf]
    data = json.loads(submission_json(result), parse_constant=pytest.fail)
    assert data["extras"]["training"]["bleu"] == "nan"
    assert data["extras"]["loss"] == ["inf", "-inf"]
