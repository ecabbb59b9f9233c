"""Part 1's soundness corpus (fixtures/cases.yaml): its cases, their sources and what grading them must show.

The one reader of the cases file: the in-process and sandbox tests here and
`bench/soundness.py --assignment attention_encoder` all take their cases from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES_PATH = FIXTURES / "cases.yaml"
CORRECT_PATH = FIXTURES / "correct.py.txt"
KINDS = ("mutant", "alternative", "cheat", "fault", "degenerate")
# The folder of fixtures/ each kind's code lives in.
FOLDERS = {
    "mutant": "mutants",
    "alternative": "alternatives",
    "degenerate": "degenerate",
    "cheat": "cheats",
    "fault": "faults",
}


@dataclass(frozen=True)
class CorpusCase:
    """One case: the correct submission with a fixture appended, and its expectations."""

    id: str
    kind: str
    tag: str | None
    fixture: str  # relative to fixtures/
    description: str
    expect: dict[str, Any] = field(default_factory=dict)

    @property
    def max_points(self) -> dict[str, float]:
        """Cheats: the most points each dishonest part may keep."""
        return {str(k): float(v) for k, v in (self.expect.get("max_points") or {}).items()}

    @property
    def affected(self) -> tuple[str, ...]:
        """Faults: the parts allowed to lose points."""
        return tuple(self.expect.get("affected") or ())

    @property
    def cap(self) -> float | None:
        """Degenerate answers: the largest share of their part's points they may keep."""
        cap = self.expect.get("cap")
        return None if cap is None else float(cap)

    def source(self) -> str:
        """The whole submission: the correct code, then the fixture as a later cell."""
        fixture = (FIXTURES / self.fixture).read_text(encoding="utf-8")
        return CORRECT_PATH.read_text(encoding="utf-8") + "\n\n" + fixture


def load_cases(path: Path = CASES_PATH) -> list[CorpusCase]:
    """The cases in file order.

    Args:
        path: the cases file.

    Returns:
        One CorpusCase per entry.
    """
    raw: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
    return [
        CorpusCase(
            id=str(c["id"]),
            kind=str(c["kind"]),
            tag=c.get("tag"),
            fixture=str(c["fixture"]),
            description=str(c.get("description") or ""),
            expect=dict(c.get("expect") or {}),
        )
        for c in raw
    ]


def cases_of(kind: str) -> list[CorpusCase]:
    """The cases of one kind, in file order."""
    return [case for case in load_cases() if case.kind == kind]


def fixture_files() -> set[str]:
    """Every fixture on disk (relative to fixtures/), whether a case lists it or not."""
    return {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("*/*.py.txt")}
