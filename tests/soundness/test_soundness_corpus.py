"""The soundness corpus itself: a valid spec, current notebooks, non-equivalent mutants, working detectors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from soundness_behaviour import behaviour_difference, load_namespace
from soundness_build import BASE_NOTEBOOK, build, stale_files
from soundness_grading import FORGED_TEXT, corpus_config, planted_files, report_mismatches
from soundness_spec import DEGENERATE_CAPS, MINIMUM_COUNTS, UNIT_PARTS, Case, load_cases

from autograder.assignment import assignment_of
from autograder.config import PROJECT_ROOT
from autograder.credit import structural_share
from autograder.grading import grader_error_result
from autograder.reports.files import write_reports

CASES = load_cases()
MUTANTS = [case for case in CASES if case.kind == "mutant"]


def test_corpus_has_the_required_number_of_cases_per_kind() -> None:
    counts = Counter(case.kind for case in CASES)
    for kind, minimum in MINIMUM_COUNTS.items():
        assert counts[kind] >= minimum, f"{counts[kind]} {kind}s, at least {minimum} required"


def test_every_unit_part_has_mutants() -> None:
    assert {case.tag for case in MUTANTS} == set(UNIT_PARTS)


def test_every_unit_part_has_several_degenerate_answers_with_a_subclass_or_a_lookalike() -> None:
    degenerate = [case for case in CASES if case.kind == "degenerate"]
    per_part = Counter(case.tag for case in degenerate)
    assert {part: per_part[part] >= 3 for part in UNIT_PARTS} == {part: True for part in UNIT_PARTS}
    for part in UNIT_PARTS:
        described = " ".join(case.description for case in degenerate if case.tag == part)
        assert "subclass" in described or "looks like" in described, part


def test_structural_checks_fit_under_the_degenerate_caps() -> None:
    # What an answer doing no work may keep: the checks assignment.yml pays outside the gate.
    parts = corpus_config().parts
    for part, cap in DEGENERATE_CAPS.items():
        assert parts[part].gate, part
        assert structural_share(parts[part]) <= cap + 1e-9, (part, parts[part].structure)


def test_committed_notebooks_are_current() -> None:
    stale = stale_files(build(CASES))
    assert stale == [], f"stale corpus files (run python tests/soundness/soundness_build.py): {stale}"


def test_cases_differ_from_the_correct_example_and_from_each_other() -> None:
    rendered = build(CASES)
    base = json.loads(BASE_NOTEBOOK.read_text(encoding="utf-8"))

    def code(text: str) -> list[str]:
        try:
            notebook: dict[str, Any] = json.loads(text)
        except ValueError:
            return [text]
        return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]

    base_code = code(json.dumps(base))
    sources = {name: code(text) for name, text in rendered.items()}
    corrupt_or_relabelled = {case.path.name for case in CASES if case.notebook}
    for name, cells in sources.items():
        if name not in corrupt_or_relabelled:
            assert cells != base_code, f"{name} is the correct example unchanged"
    assert len({json.dumps(cells) for name, cells in sources.items() if name not in corrupt_or_relabelled}) == len(
        sources
    ) - len(corrupt_or_relabelled)


def test_mutants_patch_only_their_tagged_part() -> None:
    # Part 4 covers Transformer.forward and the model call in the training step.
    cells_of_part = {
        "look_ahead_mask": ("mask",),
        "decoder_layer": ("decoder_layer",),
        "decoder": ("decoder",),
        "transformer_forward": ("transformer", "train_step"),
        "masked_loss": ("loss",),
    }
    for case in MUTANTS:
        cells = {p.cell for p in case.patches}
        assert case.tag is not None and len(cells) == 1 and cells <= set(cells_of_part[case.tag]), case.id


@pytest.fixture(scope="module")
def correct_namespace() -> dict[str, Any]:
    """The correct example's definitions, loaded in this process."""
    return load_namespace(BASE_NOTEBOOK)


@pytest.mark.parametrize("case", MUTANTS, ids=[case.id for case in MUTANTS])
def test_mutant_is_not_equivalent(case: Case, correct_namespace: dict[str, Any]) -> None:
    assert case.tag is not None, case.id
    difference = behaviour_difference(correct_namespace, load_namespace(case.path), case.tag)
    assert difference is not None, f"{case.id} behaves exactly like the correct {case.tag}"


def test_the_comparison_finds_no_difference_between_the_correct_notebook_and_itself(
    correct_namespace: dict[str, Any],
) -> None:
    again = load_namespace(BASE_NOTEBOOK)
    assert {part: behaviour_difference(correct_namespace, again, part) for part in UNIT_PARTS} == dict.fromkeys(
        UNIT_PARTS
    )


def test_planted_file_detection_sees_forged_text_and_forged_names(tmp_path: Path) -> None:
    watched = tmp_path / "results.json"
    before: dict[Path, bytes | None] = {watched: None}
    watched.write_bytes(b'{"score": 100, "output": "' + FORGED_TEXT + b'"}')
    after: dict[Path, bytes | None] = {watched: watched.read_bytes()}
    forged_name = tmp_path / "soundness-forged.json"
    assert planted_files(before, after, set(), {forged_name}) == [str(watched), str(forged_name)]
    unrelated: dict[Path, bytes | None] = {watched: b"{}"}
    assert planted_files(before, unrelated, {forged_name}, {forged_name}) == []


def test_report_check_notices_an_altered_report(tmp_path: Path) -> None:
    config = corpus_config()
    result = grader_error_result("x.ipynb", config, None, "for this test")
    write_reports([result], ["x"], config, assignment_of(config), tmp_path)
    assert report_mismatches(tmp_path, {"x": result}) == []
    (tmp_path / "x.json").write_text('{"points": 80}', encoding="utf-8")
    (tmp_path / "results.json").write_text("{}", encoding="utf-8")
    assert report_mismatches(tmp_path, {"x": result}) == [
        "x.json differs from the graded result",
        "unexpected file results.json",
    ]


# Cheats whose dishonest part borrows the solution (an import or a file read): outside the
# sandbox, with the project at hand, each must really work, or containing it proves nothing.
BORROWING_CHEATS = {
    "cheat_import_reference": "decoder_layer",
    "cheat_read_reference_file": "decoder_layer",
    "cheat_read_hidden_files": "masked_loss",
}


@pytest.mark.parametrize("case_id", sorted(BORROWING_CHEATS))
def test_borrowing_cheat_would_score_without_the_sandbox(
    case_id: str, correct_namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = next(c for c in CASES if c.id == case_id)
    monkeypatch.chdir(PROJECT_ROOT)
    monkeypatch.syspath_prepend(str(PROJECT_ROOT))
    part = BORROWING_CHEATS[case_id]
    assert case.kind == "cheat" and part in case.expect.max_points
    assert behaviour_difference(correct_namespace, load_namespace(case.path), part) is None
