"""Gradescope results.json: schema validity, scores, test names/numbers, skipped checks."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from autograder.config import load_config
from autograder.reports.gradescope import gradescope_results, write_gradescope_results
from autograder.reports.submission_json import read_submission_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts
ALL_FIXTURES = ["full_marks", "partial", "trained", "grader_error", "unreadable"]
# Gradescope's results.json format, written from Gradescope's documentation.
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "autograder/reports/schemas/gradescope_results.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def document(name: str) -> dict:
    return gradescope_results(read_submission_json(FIXTURES / f"{name}.json"), PARTS, assignment="Transformer, Part 2")


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_renders_valid_results(name):
    jsonschema.validate(document(name), SCHEMA)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_score_is_the_sum_of_the_parts_and_of_the_tests(name):
    result = read_submission_json(FIXTURES / f"{name}.json")
    doc = document(name)
    assert doc["score"] == sum(part.points for part in result.parts)
    assert doc["score"] == sum(test["score"] for test in doc["tests"])


def test_each_check_is_a_test_named_after_its_part_and_numbered_in_config_order():
    tests = {test["name"]: test for test in document("partial")["tests"]}
    failed = tests["DecoderLayer: decoder_layer_eval_output"]
    assert failed["number"] == "2.3"
    assert (failed["score"], failed["max_score"], failed["status"]) == (0, 6, "failed")
    assert "residual connections" in failed["output"]
    passed = tests["Look-ahead mask: mask_shape_and_dtype"]
    assert (passed["number"], passed["status"], passed["output"]) == ("1.1", "passed", "")
    assert passed["tags"] == ["look_ahead_mask"]


def test_skipped_checks_are_left_out_and_explained_in_the_output():
    doc = document("full_marks")
    assert not [test for test in doc["tests"] if "training" in test["tags"]]
    assert sum(test["max_score"] for test in doc["tests"]) == 80
    assert "Not graded in this run" in doc["output"]
    assert "Training run (BLEU >= 0.2): training is not enabled" in doc["output"]
    assert doc["extra_data"]["possible"] == 80


def test_graded_training_part_is_a_test():
    tests = {test["number"]: test for test in document("trained")["tests"]}
    assert tests["6.1"]["name"] == "Training run (BLEU >= 0.2): training_bleu"
    assert tests["6.1"]["max_score"] == 20
    assert "below the threshold" in tests["6.1"]["output"]


def test_load_problems_and_notes_reach_the_student():
    output = document("partial")["output"]
    assert "Score: 66/80 (status: graded)" in output
    assert "cell 7, line 3" in output
    assert "200000 bytes" in output


def test_grader_error_keeps_the_maximum_and_hides_the_traceback():
    doc = document("grader_error")
    assert doc["score"] == 0
    assert [test["name"] for test in doc["tests"]][:2] == ["Look-ahead mask", "DecoderLayer"]
    assert sum(test["max_score"] for test in doc["tests"]) == 80
    assert "The autograder failed on this submission" in doc["output"]
    assert "Traceback" not in json.dumps(doc)


@pytest.mark.parametrize(
    "broken",
    [
        {"tests": [{"name": "no score anywhere"}]},
        {"score": 1, "tests": [{"score": 1, "status": "error"}]},
        {"score": 1, "visibility": "public"},
        {"score": 1, "leaderbord": []},
        {"score": "10"},
        {"score": 1, "tests": [{"score": 1, "number": 1.1}]},
    ],
)
def test_schema_rejects_documents_gradescope_would_not_accept(broken):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


def test_schema_accepts_scores_given_only_per_test_and_a_leaderboard():
    jsonschema.validate(
        {
            "tests": [{"score": 1, "max_score": 2, "output_format": "md"}],
            "leaderboard": [{"name": "BLEU", "value": 0.21, "order": "desc"}],
        },
        SCHEMA,
    )


def test_written_file_is_stable_json(tmp_path):
    path = tmp_path / "results.json"
    result = read_submission_json(FIXTURES / "partial.json")
    write_gradescope_results(result, path, PARTS)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert json.loads(text) == gradescope_results(result, PARTS)
    assert list(json.loads(text)) == sorted(json.loads(text))
