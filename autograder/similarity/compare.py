"""Pairwise similarity of submissions by winnowed fingerprints (copydetect), template and class-wide code removed."""

from __future__ import annotations

import io
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import copydetect.utils
import numpy as np
from copydetect import CodeFingerprint, compare_files

from autograder.notebook import cell_sources
from autograder.similarity.extract import given_lines, student_code, student_units

WHOLE = "*"  # the `part` of a pair whose figure is the whole notebook's
HASH_BASE = np.uint64(1_000_003)


@dataclass(frozen=True)
class Settings:
    """How submissions are fingerprinted and which pairs are reported."""

    noise_chars: int = 25  # k: matches shorter than this many characters of normalised code are ignored
    guarantee_chars: int = 30  # matches at least this long are always found (window = guarantee - noise + 1)
    common_share: float = 0.1  # a fingerprint in more than this share of submissions is everyone's code
    min_part_chars: int = 100  # a part is compared on its own when both have this much normalised code
    # A figure (a part's or the whole's) counts fully when this many characters of normalised code
    # match, and in proportion below: a few short lines two students wrote alike prove little.
    part_evidence_chars: int = 150
    threshold: float = 0.5  # pairs reported: similarity at least this


@dataclass
class Submission:
    """One submission's own code (whole and per template cell) and their fingerprints."""

    label: str
    code: str
    units: dict[str, str]
    fingerprint: Any = None  # copydetect.CodeFingerprint; None: nothing of the student's own
    unit_fingerprints: dict[str, Any] = field(default_factory=dict)
    # fingerprint -> its weight: log(submissions / submissions holding it); rare code weighs more
    weights: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Pair:
    """Two submissions' overlap: the share of each one's fingerprints found in the other."""

    first: str
    second: str
    first_share: float  # of the first's whole code, found in the second's
    second_share: float
    matched_chars: int  # normalised code characters the two have in common
    part: str = WHOLE  # the template cell whose code gave `similarity` (WHOLE: the notebook)
    part_share: float = 0.0  # that cell's figure: its rarity-weighted mean share, each way
    whole_share: float = 0.0  # the larger whole share, in proportion to the evidence (see Settings)

    @property
    def similarity(self) -> float:
        """The larger of: the whole notebooks' figure (a student whose whole work is in the other's
        counts fully) and the best part's (one part copied into otherwise own work)."""
        return max(self.whole_share, self.part_share)


def _stable_kgram_hashes(string: str, k: int) -> np.ndarray:
    """copydetect's k-gram hashes, from a hash that is the same in every process (Python's `hash`
    of a string changes from run to run, and with it which fingerprints winnowing keeps).

    A polynomial hash of the k characters modulo 2**64 (numpy's wrapping uint64 arithmetic), then
    mixed (splitmix64's finaliser) so that winnowing's minimum picks positions evenly.
    """
    count = len(string) - k + 1
    if count <= 0:
        return np.array([], dtype=np.int64)
    codes = np.frombuffer(string.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    hashes = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(k):  # hashes[i] = sum_j codes[i + j] * BASE**(k - 1 - j)
            hashes = hashes * HASH_BASE + codes[offset : offset + count]
        hashes ^= hashes >> np.uint64(30)
        hashes *= np.uint64(0xBF58476D1CE4E5B9)
        hashes ^= hashes >> np.uint64(27)
        hashes *= np.uint64(0x94D049BB133111EB)
        hashes ^= hashes >> np.uint64(31)
    return hashes.view(np.int64)


def _fingerprint(name: str, code: str, settings: Settings, boilerplate: np.ndarray) -> Any:
    if not code.strip():
        return None
    # copydetect normalises identifiers, strings and comments away (its filter) before hashing.
    fingerprint = CodeFingerprint(
        f"{name}.py",
        settings.noise_chars,
        settings.guarantee_chars - settings.noise_chars + 1,
        boilerplate=boilerplate,
        fp=io.StringIO(code),
    )
    return fingerprint if fingerprint.hashes else None


def _fingerprint_submission(submission: Submission, settings: Settings, boilerplate: np.ndarray) -> None:
    submission.fingerprint = _fingerprint(submission.label, submission.code, settings, boilerplate)
    submission.unit_fingerprints = {}
    for name, code in submission.units.items():
        found = _fingerprint(submission.label, code, settings, boilerplate)
        if found is not None and found.token_coverage >= settings.min_part_chars:
            submission.unit_fingerprints[name] = found


def fingerprint_all(
    paths: Sequence[Path], labels: Sequence[str], template: Path | None, settings: Settings
) -> list[Submission]:
    """Each submission's own code, fingerprinted without the template's and the class's common code.

    Args:
        paths: the submission files.
        labels: their names in reports (same order).
        template: the notebook students started from (None: nothing is given code).
        settings: fingerprint sizes and the common-code share.

    Returns:
        One Submission per path, in order.
    """
    template_cells = cell_sources(template) if template is not None else []
    given = given_lines(template_cells)
    submissions = []
    for path, label in zip(paths, labels, strict=True):
        cells = cell_sources(path)
        submissions.append(Submission(label, student_code(cells, given), student_units(cells, template_cells)))
    with mock.patch.object(copydetect.utils, "hashed_kgrams", _stable_kgram_hashes):
        template_print = _fingerprint("template", "\n\n".join(template_cells), settings, np.array([], dtype=np.int64))
        boilerplate = np.array(sorted(template_print.hashes) if template_print else [], dtype=np.int64)
        for submission in submissions:
            _fingerprint_submission(submission, settings, boilerplate)
        # Code (nearly) everyone writes the same way, e.g. a call the template dictates, proves
        # nothing about two students: it is ignored like the template (MOSS's "-m" rule).
        counts = Counter(h for s in submissions if s.fingerprint is not None for h in s.fingerprint.hashes)
        limit = max(2, settings.common_share * len(submissions))
        common = [h for h, n in counts.items() if n > limit]
        if common:
            boilerplate = np.union1d(boilerplate, np.array(common, dtype=np.int64))
            for submission in submissions:
                _fingerprint_submission(submission, settings, boilerplate)
    holders = Counter(h for s in submissions for h in _all_hashes(s))
    for submission in submissions:
        submission.weights = {h: math.log(len(submissions) / holders[h]) for h in _all_hashes(submission)}
    return submissions


def _all_hashes(submission: Submission) -> set[int]:
    hashes: set[int] = set(submission.fingerprint.hashes) if submission.fingerprint is not None else set()
    for unit in submission.unit_fingerprints.values():
        hashes |= unit.hashes
    return hashes


def _weighted_share(own: Any, other: Any, weights: dict[int, float]) -> float:
    """The weight of own's fingerprints found in other's, over the weight of all of own's."""
    total = sum(weights.get(h, 0.0) for h in own.hashes)
    return sum(weights.get(h, 0.0) for h in own.hashes & other.hashes) / total if total else 0.0


def _shares(first: Any, second: Any) -> tuple[float, float, int, tuple[np.ndarray, np.ndarray]]:
    empty = np.zeros((2, 0), dtype=np.int64)
    if first is None or second is None:
        return 0.0, 0.0, 0, (empty, empty)
    overlap, (share_first, share_second), slices = compare_files(first, second)
    if not overlap:  # copydetect returns 1-d empty arrays then
        return 0.0, 0.0, 0, (empty, empty)
    return float(share_first), float(share_second), int(overlap), (slices[0], slices[1])


def compare_pair(
    first: Submission, second: Submission, settings: Settings = Settings()
) -> tuple[Pair, tuple[np.ndarray, np.ndarray]]:
    """Compare two fingerprinted submissions: as wholes, and part by part.

    Args:
        first: one submission.
        second: another.
        settings: `part_evidence_chars` (how much matching code a part's figure needs to count fully).

    Returns:
        The pair's figures and the matching character slices of each one's whole code (2 x n arrays).
    """
    share_first, share_second, overlap, slices = _shares(first.fingerprint, second.fingerprint)
    part, part_share = WHOLE, 0.0
    for name in sorted(first.unit_fingerprints.keys() & second.unit_fingerprints.keys()):
        mine, theirs = first.unit_fingerprints[name], second.unit_fingerprints[name]
        _, _, matched, _ = _shares(mine, theirs)
        weighted = (_weighted_share(mine, theirs, first.weights) + _weighted_share(theirs, mine, second.weights)) / 2
        share = weighted * min(1.0, matched / settings.part_evidence_chars)
        if share > part_share:
            part, part_share = name, share
    whole = max(share_first, share_second) * min(1.0, overlap / settings.part_evidence_chars)
    if part_share <= whole:
        part = WHOLE
    return Pair(first.label, second.label, share_first, share_second, overlap, part, part_share, whole), slices


def candidate_pairs(submissions: Sequence[Submission]) -> list[tuple[int, int]]:
    """The pairs that share at least one fingerprint (the others are 0 and need no comparison).

    Args:
        submissions: fingerprinted submissions.

    Returns:
        Index pairs (i < j), sorted.
    """
    holders: dict[int, list[int]] = defaultdict(list)
    for index, submission in enumerate(submissions):
        for value in _all_hashes(submission):
            holders[value].append(index)
    pairs = {(a, b) for indices in holders.values() for i, a in enumerate(indices) for b in indices[i + 1 :]}
    return sorted(pairs)


def rank_pairs(submissions: Sequence[Submission], settings: Settings = Settings()) -> list[Pair]:
    """The pairs of submissions that share any code, most similar first.

    Args:
        submissions: from `fingerprint_all`.
        settings: as given to `fingerprint_all`.

    Returns:
        The pairs by similarity, then matched characters, then names (deterministic).
    """
    pairs = [compare_pair(submissions[a], submissions[b], settings)[0] for a, b in candidate_pairs(submissions)]
    return sorted(pairs, key=lambda p: (-p.similarity, -p.matched_chars, p.first, p.second))
