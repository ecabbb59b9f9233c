"""The student's own look-ahead mask, evaluated in the sandboxed worker, as data for the picture."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

import assignments.transformer_mt.reference.masks
from assignments.transformer_mt.assignment import ASSIGNMENT
from assignments.transformer_mt.attention_view import collect_mask_picture, example_batch, expected_mask
from assignments.transformer_mt.checks.probes import PROBE_SOURCE
from assignments.transformer_mt.checks.reference_student import ReferenceStudent
from autograder.config import load_config
from autograder.notebook import load_submission
from autograder.part_kinds import worker_limits
from autograder.sandbox import StudentError, Worker, WorkerFailure

GRADER_GLOBALS = dict(ASSIGNMENT.grader_globals)  # Part 2's (assignment.yml `grader_globals`)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures" / "integrations"


def picture_of(notebook: str) -> dict:
    """collect_mask_picture on a real sandboxed worker holding the notebook (as the engine would)."""
    loaded = load_submission(EXAMPLES / f"{notebook}.ipynb", provided_names=frozenset(GRADER_GLOBALS))
    statements = [(f"cell {s.cell}", s.line, s.code) for s in loaded.statements]
    with Worker(statements, worker_limits(load_config()), dict(GRADER_GLOBALS), helpers_source=PROBE_SOURCE) as worker:
        return collect_mask_picture(worker)


@pytest.fixture(scope="module")
def pictures() -> dict[str, dict]:
    names = ["correct_original_format", "buggy_original_format"]
    with ThreadPoolExecutor(len(names)) as pool:  # two worker processes start side by side
        return dict(zip(names, pool.map(picture_of, names), strict=True))


def test_example_batch_has_padding_and_the_expected_mask_is_the_references() -> None:
    batch, labels = example_batch()
    assert (batch == 3).any(dim=1).all() and labels[1][-1] == "<pad>"
    correct = assignments.transformer_mt.reference.masks.create_look_ahead_mask_for_attention(batch, 3)[:, 0] != 0
    assert torch.equal(expected_mask(batch), correct)


def test_correct_mask_is_lower_triangular_with_padding_blocked(pictures) -> None:
    picture = pictures["correct_original_format"]
    assert picture["error"] is None and picture["matches"] is True
    mask = torch.tensor(picture["mask"])
    batch = torch.tensor(picture["tokens"])
    assert torch.equal(mask.bool(), torch.ones(6, 6).tril().bool() & (batch != 3)[:, None, :])
    assert not mask.triu(1).any()
    assert picture["shape"] == [2, 1, 6, 6]


def test_triu_bug_shows_the_future_and_hides_the_past(pictures) -> None:
    picture = pictures["buggy_original_format"]
    mask = torch.tensor(picture["mask"])
    assert picture["error"] is None and picture["matches"] is False
    assert mask.triu(1).any() and not mask.tril(-1).any()  # upper-triangular
    assert any("LATER" in f for f in picture["findings"])
    assert picture["expected"] == pictures["correct_original_format"]["mask"]


def test_fixtures_used_by_the_report_tests_are_what_the_worker_returns(pictures) -> None:
    for name, fixture in [
        ("correct_original_format", "mask_correct.json"),
        ("buggy_original_format", "mask_triu.json"),
    ]:
        assert json.loads((FIXTURES / fixture).read_text(encoding="utf-8")) == pictures[name]


def test_the_picture_is_plain_json() -> None:
    picture = collect_mask_picture(ReferenceStudent(GRADER_GLOBALS))
    assert json.loads(json.dumps(picture)) == picture and picture["matches"]


class _Failing:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def call(self, *args, **kwargs):
        raise self.error


class _Returning:
    def __init__(self, value) -> None:
        self.value = value

    def call(self, *args, **kwargs):
        return self.value


@pytest.mark.parametrize(
    "student, fragment",
    [
        (
            _Failing(StudentError("NameError", "name 'create_look_ahead_mask_for_attention' is not defined")),
            "NameError",
        ),
        (_Failing(WorkerFailure("timed out after 30 s")), "timed out after 30 s"),
        (_Returning(None), "still a stub"),
        (_Returning([[1, 0]]), "not a torch.Tensor"),
        (_Returning(torch.ones(2, 6)), "shape `(2, 6)`"),
    ],
)
def test_errors_are_recorded_never_raised(student, fragment) -> None:
    picture = collect_mask_picture(student)
    assert picture["mask"] is None and fragment in picture["error"]
    assert picture["expected"] and picture["matches"] is False


def test_a_bool_mask_without_the_head_axis_is_accepted() -> None:
    batch, _ = example_batch()
    picture = collect_mask_picture(_Returning(expected_mask(batch)))
    assert picture["matches"] is True and picture["dtype"] == "torch.bool"
