"""The soundness corpus specification (cases.yaml): loading, validation and expected outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
SPEC_PATH = HERE / "cases.yaml"
CORPUS_DIR = HERE / "corpus"

KINDS = ("mutant", "alternative", "cheat", "fault", "degenerate")
UNIT_PARTS = ("look_ahead_mask", "decoder_layer", "decoder", "transformer_forward", "masked_loss")
MINIMUM_COUNTS = {"mutant": 30, "alternative": 8, "cheat": 10, "fault": 10, "degenerate": 15}
# A degenerate answer (right shapes, no work) keeps only the structural checks of its part
# (assignment.yml `structure`; every other check is paid behind the part's gate), worth at most
# this share of the part's points (docs/SOUNDNESS.md).
DEGENERATE_CAPS = {
    "look_ahead_mask": 0.10,
    "masked_loss": 0.10,
    "transformer_forward": 0.10,
    "decoder_layer": 0.10,
    "decoder": 0.10,
}
_CASE_KEYS = {"id", "kind", "tag", "description", "patches", "notebook", "expect"}
_PATCH_KEYS = {"cell", "replace", "source", "prepend", "append", "insert_after"}
_EXPECT_KEYS = {"max_points", "must_fail", "forged_paths", "affected", "reason", "load_problem", "status"}


class SpecError(ValueError):
    """cases.yaml is malformed; the message names the case and the field."""


@dataclass(frozen=True)
class Replacement:
    """Replace the unique occurrence of `old` with `new` in a cell."""

    old: str
    new: str


@dataclass(frozen=True)
class Patch:
    """A change of one named cell, or a new cell inserted after one."""

    cell: str | None = None
    replace: tuple[Replacement, ...] = ()
    source: str | None = None  # the whole new cell (or the inserted cell's source)
    prepend: str | None = None
    append: str | None = None
    insert_after: str | None = None


@dataclass(frozen=True)
class Expectation:
    """What grading must show for a cheat or a fault (mutants and alternatives need none)."""

    max_points: dict[str, float] = field(default_factory=dict)  # cheats: cap per dishonest part
    must_fail: tuple[str, ...] = ()  # cheats: checks that must fail
    forged_paths: tuple[str, ...] = ()  # cheats: files that must not appear
    affected: tuple[str, ...] = ()  # faults: parts allowed to lose points
    reason: str = ""  # faults: regex in affected parts' messages
    load_problem: str = ""  # faults: regex in the load problems
    status: str = "graded"  # the submission's status
    cap: float | None = None  # degenerate answers: share of their part's points (None: DEGENERATE_CAPS)


@dataclass(frozen=True)
class Case:
    """One corpus notebook: the correct example with a patch, and what grading it must show."""

    id: str
    kind: str
    tag: str | None
    description: str
    patches: tuple[Patch, ...]
    notebook: dict[str, Any] = field(default_factory=dict)
    expect: Expectation = field(default_factory=Expectation)
    # Another assignment's corpus (bench/soundness.py --assignment) names its unit parts and
    # where its submission file is.
    unit_parts: tuple[str, ...] = UNIT_PARTS
    submission: Path | None = None

    @property
    def path(self) -> Path:
        """Where the graded submission lives (Part 2: the generated notebook)."""
        return self.submission if self.submission is not None else CORPUS_DIR / f"{self.id}.ipynb"

    def full_parts(self) -> tuple[str, ...]:
        """Unit parts that must keep full marks."""
        if self.kind in ("mutant", "degenerate"):
            return tuple(p for p in self.unit_parts if p != self.tag)
        if self.kind == "alternative":
            return self.unit_parts
        if self.kind == "cheat":
            return tuple(p for p in self.unit_parts if p not in self.expect.max_points)
        return tuple(p for p in self.unit_parts if p not in self.expect.affected)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise SpecError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def _patch(raw: Any, where: str) -> Patch:
    if not isinstance(raw, dict) or not raw:
        raise SpecError(f"{where}: expected a mapping")
    unknown = set(raw) - _PATCH_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    if ("cell" in raw) == ("insert_after" in raw):
        raise SpecError(f"{where}: give exactly one of `cell` and `insert_after`")
    replacements = []
    for index, item in enumerate(raw.get("replace") or []):
        if not isinstance(item, dict) or set(item) != {"old", "new"}:
            raise SpecError(f"{where}.replace[{index}]: expected {{old, new}}")
        old = _text(item["old"], f"{where}.replace[{index}].old")
        if not old:
            raise SpecError(f"{where}.replace[{index}].old: empty")
        replacements.append(Replacement(old, _text(item["new"], f"{where}.replace[{index}].new")))
    patch = Patch(
        cell=raw.get("cell"),
        replace=tuple(replacements),
        source=raw.get("source"),
        prepend=raw.get("prepend"),
        append=raw.get("append"),
        insert_after=raw.get("insert_after"),
    )
    if patch.insert_after is not None and (patch.source is None or patch.replace or patch.prepend or patch.append):
        raise SpecError(f"{where}: insert_after takes only `source`")
    if patch.cell is not None and patch.source is not None and (patch.replace or patch.prepend or patch.append):
        raise SpecError(f"{where}: `source` replaces the whole cell; nothing else can go with it")
    if patch.cell is not None and not (patch.replace or patch.source or patch.prepend or patch.append):
        raise SpecError(f"{where}: the patch changes nothing")
    return patch


def _expectation(raw: Any, kind: str, where: str) -> Expectation:
    raw = raw or {}
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: expected a mapping")
    unknown = set(raw) - _EXPECT_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    expectation = Expectation(
        max_points={str(k): float(v) for k, v in (raw.get("max_points") or {}).items()},
        must_fail=tuple(raw.get("must_fail") or ()),
        forged_paths=tuple(raw.get("forged_paths") or ()),
        affected=tuple(raw.get("affected") or ()),
        reason=str(raw.get("reason") or ""),
        load_problem=str(raw.get("load_problem") or ""),
        status=str(raw.get("status") or "graded"),
    )
    for part in (*expectation.max_points, *expectation.affected):
        if part not in UNIT_PARTS:
            raise SpecError(f"{where}: {part!r} is not a unit part")
    if kind == "cheat" and not expectation.max_points:
        raise SpecError(f"{where}: a cheat names the part it cheats on in max_points")
    if kind in ("mutant", "alternative", "degenerate") and raw:
        raise SpecError(f"{where}: {kind}s take no expectations (they are implied)")
    if kind == "fault" and expectation.affected and not expectation.reason:
        raise SpecError(f"{where}: a fault that costs points names the reason shown for it")
    return expectation


def _case(raw: Any, index: int) -> Case:
    where = f"cases[{index}]"
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: expected a mapping")
    unknown = set(raw) - _CASE_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    case_id = _text(raw.get("id"), f"{where}.id")
    where = f"case {case_id}"
    kind = raw.get("kind")
    if kind not in KINDS:
        raise SpecError(f"{where}: kind must be one of {', '.join(KINDS)}")
    tag = raw.get("tag")
    if tag is not None and tag not in UNIT_PARTS:
        raise SpecError(f"{where}: tag {tag!r} is not a unit part")
    if kind in ("mutant", "degenerate") and tag is None:
        raise SpecError(f"{where}: a {kind} is tagged with the one part it breaks")
    if kind == "alternative" and tag is not None:
        raise SpecError(f"{where}: an alternative breaks nothing (tag: null)")
    patches = tuple(_patch(p, f"{where}.patches[{i}]") for i, p in enumerate(raw.get("patches") or []))
    notebook = raw.get("notebook") or {}
    if not patches and not notebook:
        raise SpecError(f"{where}: no patch and no notebook change")
    if kind in ("mutant", "alternative", "degenerate") and len({p.cell or p.insert_after for p in patches}) != 1:
        raise SpecError(f"{where}: a {kind} patches exactly one cell")
    expect = _expectation(raw.get("expect"), kind, f"{where}.expect")
    if kind == "cheat" and tag not in expect.max_points:
        raise SpecError(f"{where}: the cheat's tag must be one of its max_points parts")
    return Case(
        case_id, kind, tag, _text(raw.get("description"), f"{where}.description"), patches, dict(notebook), expect
    )


def load_cases(path: Path = SPEC_PATH) -> list[Case]:
    """Read and validate the corpus specification.

    Args:
        path: the YAML file (default: tests/soundness/cases.yaml).

    Returns:
        The cases in file order.

    Raises:
        SpecError: a case is malformed or two cases share an id.
    """
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise SpecError(f"{path}: expected a mapping with a `cases` list")
    cases = [_case(raw, index) for index, raw in enumerate(document["cases"])]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise SpecError(f"case {case.id}: duplicate id")
        seen.add(case.id)
    return cases
