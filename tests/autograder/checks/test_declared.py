"""Declared checks (autograder/checks/declared.py, checks/declared.yml): the kinds, their credit rule,
the generated inputs, and every assignment's declarations against its parts and catalogues."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml
from namespace_student import NamespaceStudent  # the tests' helper (tests/namespace_student.py)

from autograder.assignment import load_assignment
from autograder.assignment_folder import ASSIGNMENTS_DIR, AssignmentError, read_declared, read_settings
from autograder.checks.declared import generated
from autograder.checks.support import CheckContext
from autograder.i18n import use_language
from autograder.runner import run_checks

NAIVE_SOFTMAX = """
import torch

def softmax(x):
    exps = torch.exp(x)
    return exps / exps.sum(dim=-1, keepdim=True)
"""


def _folder(tmp_path: Path, declared: str, parts: str) -> Path:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "declared.yml").write_text(declared, encoding="utf-8")
    (tmp_path / "assignment.yml").write_text(parts, encoding="utf-8")
    return tmp_path


def test_kinds_give_a_part_without_its_own_rule_its_gate_and_structure(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        "parts:\n  p:\n    function: f\n    checks: {a: shape, b: values, c: {kind: values, credit: gated}}\n"
        "  q:\n    function: g\n    checks: {d: shape, e: values}\n",
        "parts:\n  p: {points: 3, checks: {a: 1, b: 1, c: 1}}\n"
        "  q: {points: 2, checks: {d: 1, e: 1}, gate: [d], structure: []}\n",
    )
    parts = read_settings(folder)["parts"]
    assert (parts["p"]["gate"], parts["p"]["structure"]) == (["b"], ["a"])
    assert (parts["q"]["gate"], parts["q"]["structure"]) == (["d"], [])  # a part's own rule wins


def test_an_unknown_kind_is_refused_with_where_it_is(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "parts:\n  p:\n    function: f\n    checks: {a: vibes}\n", "parts: {}\n")
    with pytest.raises(AssignmentError, match=r"parts\.p\.checks\.a: unknown kind 'vibes'"):
        read_declared(folder)


def test_generated_arguments_are_seeded_and_shaped_as_declared() -> None:
    spec = [
        {"randn": [2, 3], "scale": 10},
        {"uniform": [4], "low": 2, "high": 3},
        {"causal": 3},
        {"mask": [5, 4]},
        None,
    ]
    first, second = (generated(spec, torch.Generator().manual_seed(7)) for _ in range(2))
    assert all(torch.equal(a, b) for a, b in zip(first[:4], second[:4], strict=True)) and first[4] is None
    randn, uniform, causal, mask = first[:4]
    assert randn.shape == (2, 3) and float(randn.abs().max()) > 1.5  # scaled
    assert bool(((uniform >= 2) & (uniform <= 3)).all())
    assert torch.equal(causal, torch.ones(3, 3, dtype=torch.bool).tril())
    assert mask.dtype == torch.bool and bool(mask[..., 0].all())  # every query sees a key
    with pytest.raises(ValueError, match="unknown generated argument"):
        generated({"zeros": [2]}, torch.Generator())


def test_a_declared_values_check_fails_with_the_assignments_message() -> None:
    assignment = load_assignment("tensor_basics")
    student = NamespaceStudent(NAIVE_SOFTMAX, {}, {})
    with use_language("en"):
        verdicts = run_checks(
            assignment.checks_dir, CheckContext(student=student), ["softmax_values", "softmax_stable"]
        )
    assert verdicts["softmax_values"].passed  # small scores: the naive softmax is right
    assert not verdicts["softmax_stable"].passed and "Subtract each row's max" in verdicts["softmax_stable"].message


@pytest.mark.parametrize("name", sorted(n for n in ASSIGNMENTS_DIR.glob("*/checks/declared.yml")))
def test_every_declaration_names_its_parts_checks_and_catalogued_messages(name: Path) -> None:
    folder = name.parents[1]
    parts = read_settings(folder)["parts"]
    catalogues = [
        yaml.safe_load((folder / "messages" / f"{lang}.yml").read_text(encoding="utf-8")) for lang in ("ko", "en")
    ]
    for part, declared in read_declared(folder).items():
        assert set(declared["checks"]) <= set(parts[part]["checks"]), (folder.name, part)
        for check, spec in declared["checks"].items():
            if "message" in spec:
                assert all(spec["message"] in catalogue for catalogue in catalogues), (folder.name, check)
            if spec["kind"] in ("shape", "values"):
                assert "function" in declared and ("cases" in declared or "cases" in spec), (folder.name, check)
            else:
                assert {"engine", "module"} <= set(declared), (folder.name, check)


def test_checks_bound_together_carry_their_part_for_the_runner() -> None:
    """A worker failure stops the rest of the failing check's part only (the runner's `_part_of`)."""
    from types import SimpleNamespace

    from autograder.checks.declared import declared_checks
    from autograder.runner import _part_of

    checks_dir = ASSIGNMENTS_DIR / "tensor_basics" / "checks"
    every = declared_checks(str(checks_dir / "test_declared.py"))
    module = SimpleNamespace(__name__="assignments.tensor_basics.checks.test_declared")
    parts = {name: _part_of(SimpleNamespace(function=check, module=module)) for name, check in every.items()}  # type: ignore[arg-type]
    assert parts["test_softmax_stable"] == "softmax" and parts["test_layer_norm_eps"] == "layer_norm"
    one_part = declared_checks(str(checks_dir / "test_declared.py"), "attention")
    assert sorted(one_part) == ["test_attention_masking", "test_attention_shape", "test_attention_values"]
    assert _part_of(SimpleNamespace(function=one_part["test_attention_shape"], module=module)) == module.__name__  # type: ignore[arg-type]
