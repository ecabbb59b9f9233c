"""Structural weight mapping between a reference module and a student's module."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from autograder.i18n import t

ParamList = Sequence[tuple[str, Sequence[int]]]  # named_parameters() order: (name, shape)
Mapping = dict[str, str]  # reference name -> student name

# Upper bound on the extra pairings tried after the cheap ones (each costs a forward pass).
MAX_CANDIDATES = 48


def describe_mismatch(reference: ParamList, student: ParamList) -> str:
    """Explain, for a student, why parameters cannot be matched.

    Args:
        reference: reference (name, shape) list.
        student: student (name, shape) list.

    Returns:
        One sentence comparing counts and sizes.
    """
    return t("checks.transplant.counts", **layout_sizes([s for _, s in student], [s for _, s in reference]))


def layout_sizes(student: Sequence[Sequence[int]], reference: Sequence[Sequence[int]]) -> dict[str, Any]:
    """The fields of a message comparing two parameter layouts: tensor counts and numbers of values.

    Args:
        student: the student's parameter shapes.
        reference: the reference's parameter shapes.

    Returns:
        count, numbers, want_count, want_numbers (the numbers with thousands separators).
    """
    numbers, want_numbers = (f"{sum(math.prod(s) for s in shapes):,}" for shapes in (student, reference))
    return {"count": len(student), "numbers": numbers, "want_count": len(reference), "want_numbers": want_numbers}


def _shape_key(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(s) for s in shape)


def candidate_mappings(reference: ParamList, student: ParamList) -> Iterator[Mapping]:
    """Yield plausible reference→student parameter mappings, most likely first.

    Order: (1) by registration order when the shape sequences agree; (2) by documented names
    when every reference name exists in the student with the same shape; (3) owner modules
    (the module holding a tensor) paired by shape in their relative registration order; (4) other
    pairings of small groups of same-shaped owners. The caller keeps the first mapping under
    which the student's module reproduces the reference, so a wrong pairing costs nothing.

    Args:
        reference: reference (name, shape) pairs in registration order.
        student: the student's (name, shape) pairs in registration order.

    Returns:
        An iterator of mappings; empty when the parameter shapes cannot correspond.
    """
    if sorted(_shape_key(s) for _, s in reference) != sorted(_shape_key(s) for _, s in student):
        return
    cheap: list[Mapping] = []
    if [_shape_key(s) for _, s in reference] == [_shape_key(s) for _, s in student]:
        cheap.append({r: s for (r, _), (s, _) in zip(reference, student, strict=False)})  # by order
    student_shapes = {name: _shape_key(shape) for name, shape in student}
    if all(student_shapes.get(name) == _shape_key(shape) for name, shape in reference):
        cheap.append({name: name for name, _ in reference})  # by name
    seen: list[Mapping] = []  # dicts are not hashable: each new mapping is compared with those before
    for mapping in itertools.chain(cheap, itertools.islice(owner_pairings(reference, student), MAX_CANDIDATES)):
        if mapping not in seen:
            seen.append(mapping)
            yield mapping


def _owner(name: str) -> str:
    # "layers.0.norm1.layer_norm.weight" -> "layers.0.norm1.layer_norm"
    return name.rsplit(".", 1)[0] if "." in name else ""


def _grouped_by_owner(
    params: ParamList, owner: Callable[[str], str]
) -> dict[tuple[tuple[int, ...], ...], list[list[str]]]:
    """Owner modules grouped by the shapes they hold, each group in registration order."""
    owners: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for name, shape in params:
        owners.setdefault(owner(name), []).append((name, _shape_key(shape)))
    groups: dict[tuple[tuple[int, ...], ...], list[list[str]]] = defaultdict(list)
    for members in owners.values():
        signature = tuple(shape for _, shape in members)
        groups[signature].append([name for name, _ in members])
    return groups


def owner_pairings(reference: ParamList, student: ParamList, owner: Callable[[str], str] = _owner) -> Iterator[Mapping]:
    """Pair owner modules that hold the same shapes: first in their relative registration order,
    then every other pairing of the groups of at most 3 same-shaped owners.

    The first mapping accepts modules whose attributes are registered in another order overall
    (say, all three LayerNorms last) as long as same-shaped submodules keep their relative order.

    Args:
        reference: reference (name, shape) pairs in registration order.
        student: the student's (name, shape) pairs in registration order.
        owner: parameter name -> the module that owns it (default: the one holding the tensor).

    Returns:
        An iterator of mappings; empty when the owners' shapes do not correspond.
    """
    ref_groups, stu_groups = _grouped_by_owner(reference, owner), _grouped_by_owner(student, owner)
    if {k: len(v) for k, v in ref_groups.items()} != {k: len(v) for k, v in stu_groups.items()}:
        return
    signatures = list(ref_groups)
    choices = [
        list(itertools.permutations(stu_groups[sig])) if len(stu_groups[sig]) <= 3 else [tuple(stu_groups[sig])]
        for sig in signatures
    ]
    for choice in itertools.product(*choices):
        mapping: Mapping = {}
        for sig, stu_owners in zip(signatures, choice, strict=True):
            for ref_names, stu_names in zip(ref_groups[sig], stu_owners, strict=True):
                mapping.update(zip(ref_names, stu_names, strict=False))
        yield mapping
