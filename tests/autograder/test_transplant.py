"""Structural weight mapping: order, names, reordered same-shaped submodules."""

from __future__ import annotations

from autograder.transplant import candidate_mappings, describe_mismatch

REFERENCE = [
    ("attn.w", [4, 4]),
    ("attn.b", [4]),
    ("norm1.w", [4]),
    ("norm1.b", [4]),
    ("ffn.w", [8, 4]),
    ("norm2.w", [4]),
    ("norm2.b", [4]),
]


def test_same_shapes_in_order_map_by_order_first() -> None:
    student = [(f"p{i}", shape) for i, (_, shape) in enumerate(REFERENCE)]
    first = next(candidate_mappings(REFERENCE, student))
    assert first == {name: f"p{i}" for i, (name, _) in enumerate(REFERENCE)}


def test_documented_names_in_another_order_map_by_name() -> None:
    student = list(reversed(REFERENCE))
    mappings = list(candidate_mappings(REFERENCE, student))
    assert {name: name for name, _ in REFERENCE} in mappings


def test_renamed_and_reordered_submodules_are_paired_by_shape() -> None:
    student = [
        ("ln_a.w", [4]),
        ("ln_a.b", [4]),
        ("ln_b.w", [4]),
        ("ln_b.b", [4]),
        ("att.w", [4, 4]),
        ("att.b", [4]),
        ("ff.w", [8, 4]),
    ]
    mappings = list(candidate_mappings(REFERENCE, student))
    assert mappings, "a mapping must exist"
    wanted = {
        "attn.w": "att.w",
        "attn.b": "att.b",
        "norm1.w": "ln_a.w",
        "norm1.b": "ln_a.b",
        "ffn.w": "ff.w",
        "norm2.w": "ln_b.w",
        "norm2.b": "ln_b.b",
    }
    swapped = {**wanted, "norm1.w": "ln_b.w", "norm1.b": "ln_b.b", "norm2.w": "ln_a.w", "norm2.b": "ln_a.b"}
    assert wanted in mappings and swapped in mappings


def test_different_shapes_give_no_mapping_and_a_clear_description() -> None:
    student = REFERENCE[:-2]
    assert list(candidate_mappings(REFERENCE, student)) == []
    assert "5 parameter tensors" in describe_mismatch(REFERENCE, student)
