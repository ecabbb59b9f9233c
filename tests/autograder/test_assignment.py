"""The assignment as a loadable unit: the loader, the interface Part 2 fills in, its manifest."""

from __future__ import annotations

import pickle
from functools import partial

import pytest

import autograder.assignment_folder as unit
from assignments.build import target
from autograder.assignment import Assignment, load_assignment
from autograder.assignment_folder import AssignmentError
from autograder.config import load_config
from autograder.integrations.public_checks import provided_globals


def test_part_2_loads_with_its_checks_parts_and_hooks() -> None:
    assignment = load_assignment("transformer_mt")
    assert isinstance(assignment, Assignment) and assignment.name == "transformer_mt"
    assert (assignment.checks_dir / "conftest.py").is_file()
    assert {p.name for p in assignment.checks_dir.glob("test_*.py")} >= {"test_look_ahead_mask.py", "test_decoder.py"}
    # what the public checks inject
    assert assignment.provided_names == frozenset(provided_globals(target("transformer_mt").student_dir / "tests"))
    assert assignment.training is not None and assignment.training_part in assignment.parts
    assert list(load_config().parts) == list(assignment.parts)
    assert assignment.reference_student().has("create_look_ahead_mask_for_attention")


def test_assignment_yml_gives_the_globals_and_preload_an_assignment_py_leaves_out() -> None:
    from mtkit.constants import EOS_IDX, PAD_IDX, SOS_IDX, SRC_LANGUAGE, TGT_LANGUAGE, UNK_IDX

    part2 = load_assignment("transformer_mt")
    # Part 2's grader_globals are the template's constants, written out in its assignment.yml.
    assert part2.grader_globals == {
        "device": "cpu",
        "src_language": SRC_LANGUAGE,
        "tgt_language": TGT_LANGUAGE,
        "unk_idx": UNK_IDX,
        "sos_idx": SOS_IDX,
        "eos_idx": EOS_IDX,
        "pad_idx": PAD_IDX,
        "vocab_size": {SRC_LANGUAGE: 29, TGT_LANGUAGE: 23},
    }
    assert part2.worker_preload[:2] == ("numpy", "torch.nn") and "nltk.translate.bleu_score" in part2.worker_preload
    assert part2.messages_dir == part2.folder / "messages" and part2.checks_dir == part2.folder / "checks"
    # Part 1 names its globals itself (checks/conftest.py) and takes the default preload.
    part1 = load_assignment("attention_encoder")
    assert part1.grader_globals["pad_idx"] == 3 and part1.worker_preload == ("torch.nn",)


def test_the_manifest_names_files_that_exist() -> None:
    manifest = load_assignment("transformer_mt").manifest
    assert "transformer_mt.ipynb" in manifest.student
    for path in (*manifest.grader, *manifest.public_checks):
        assert (unit.PROJECT_ROOT / path).exists(), path
    assert not [p for p in manifest.public_checks if p.startswith("assignments")]


def test_an_unknown_or_ambiguous_assignment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AssignmentError, match="unknown assignment 'nope'"):
        load_assignment("nope")
    monkeypatch.setattr(unit, "available_assignments", lambda: ["a", "b"])
    with pytest.raises(AssignmentError, match="name the assignment"):
        unit.default_assignment_name()


@pytest.mark.parametrize("name", unit.available_assignments())
def test_an_assignment_pickles_by_name_and_the_bound_grade_function_with_it(name: str) -> None:
    """Pool processes and Ray nodes import their own copy: no path of this process travels."""
    from autograder.engine import grade_submission

    assignment = load_assignment(name)
    data = pickle.dumps(assignment)
    assert str(assignment.folder).encode() not in data and pickle.loads(data) is assignment
    bound = pickle.loads(pickle.dumps(partial(grade_submission, assignment=assignment)))
    assert bound.func is grade_submission and bound.keywords == {"assignment": assignment}
