"""Pairwise similarity of submissions by winnowed fingerprints (copydetect), template and class-wide code removed."""

from __future__ import annotations

import io
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
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
    common_share: float = 0.1  # a fingerprint in more than this share of submissions is everyone's code,
    # unless a group of at most `group_share` of the class holds it with at least `group_code` of each
    # member's own fingerprints (a copy ring's rare version: kept) and the reference solution does not
    group_share: float = 0.5
    group_code: float = 0.5
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
    paths: Sequence[Path],
    labels: Sequence[str],
    templates: Sequence[Path],
    settings: Settings,
    reference: Path | None = None,
) -> list[Submission]:
    """Each submission's own code, fingerprinted without the templates' and the class's common code.

    Args:
        paths: the submission files.
        labels: their names in reports (same order).
        templates: the notebooks students may start from, the first one's cells naming the parts
            (none: nothing is given code).
        settings: fingerprint sizes and the common-code rule.
        reference: the solved master notebook: code the class shares with it is everyone's way of
            writing it, never a group's own (None: no such notebook).

    Returns:
        One Submission per path, in order.
    """
    template_cells = cell_sources(templates[0]) if templates else []
    all_given = [cell for template in templates for cell in cell_sources(template)]
    given = given_lines(all_given)
    submissions = []
    for path, label in zip(paths, labels, strict=True):
        cells = cell_sources(path)
        submissions.append(Submission(label, student_code(cells, given), student_units(cells, template_cells)))
    with mock.patch.object(copydetect.utils, "hashed_kgrams", _stable_kgram_hashes):
        template_print = _fingerprint("template", "\n\n".join(all_given), settings, np.array([], dtype=np.int64))
        boilerplate = np.array(sorted(template_print.hashes) if template_print else [], dtype=np.int64)
        solution = (
            _fingerprint("reference", student_code(cell_sources(reference), given), settings, boilerplate)
            if reference is not None
            else None
        )
        for submission in submissions:
            _fingerprint_submission(submission, settings, boilerplate)
        common = _common_hashes(submissions, set(solution.hashes) if solution is not None else set(), settings)
        if common:
            boilerplate = np.union1d(boilerplate, np.array(common, dtype=np.int64))
            for submission in submissions:
                _fingerprint_submission(submission, settings, boilerplate)
    holders = Counter(h for s in submissions for h in _all_hashes(s))
    for submission in submissions:
        submission.weights = {h: math.log(len(submissions) / holders[h]) for h in _all_hashes(submission)}
    return submissions


def _common_hashes(submissions: Sequence[Submission], reference: set[int], settings: Settings) -> list[int]:
    """Fingerprints that say nothing about two students (MOSS's "-m" rule, with copy groups kept).

    Code (nearly) everyone writes the same way, e.g. a call the template dictates, is held by more
    than `common_share` of the class. So is a large copy ring's code: a group (at most `group_share`
    of the class) whose members hold these fingerprints together as `group_code` of their own code or
    more. A fingerprint held by such a group stays when, the group counted as one author, too few
    hold it to be common and the reference solution does not hold it: it is that group's own version.
    """
    prints = [s.fingerprint.hashes if s.fingerprint is not None else set() for s in submissions]
    holders: defaultdict[int, set[int]] = defaultdict(set)
    for index, hashes in enumerate(prints):
        for value in hashes:
            holders[value].add(index)
    limit = max(2, settings.common_share * len(submissions))
    widespread = {value for value, who in holders.items() if len(who) > limit}
    group_of = {
        index: group
        for group in _groups(prints, widespread, settings.group_code)
        if len(group) <= settings.group_share * len(submissions)
        for index in group
    }
    return [
        value
        for value in widespread
        if value in reference
        or not any(len(holders[value] - group_of[i]) + 1 <= limit for i in holders[value] if i in group_of)
    ]


def _groups(prints: Sequence[set[int]], shared: set[int], least: float) -> list[frozenset[int]]:
    """Submissions linked (transitively) by holding `shared` fingerprints together as at least
    `least` of the smaller one's fingerprints; groups of two or more, by index."""
    own = [hashes & shared for hashes in prints]
    return connected(
        len(prints),
        (
            (a, b)
            for a, b in itertools.combinations(range(len(prints)), 2)
            if (smaller := min(len(prints[a]), len(prints[b]))) and len(own[a] & own[b]) >= least * smaller
        ),
    )


def connected(count: int, links: Iterable[tuple[int, int]]) -> list[frozenset[int]]:
    """The groups of two or more among `count` items joined by `links` (connected components).

    Args:
        count: the items, 0 to count - 1.
        links: pairs of linked items.

    Returns:
        Each group's items, groups in the order of their smallest item.
    """
    parent = list(range(count))

    def root(index: int) -> int:
        while parent[index] != index:
            index = parent[index]
        return index

    for a, b in links:
        parent[root(a)] = root(b)
    members: defaultdict[int, set[int]] = defaultdict(set)
    for index in range(count):
        members[root(index)].add(index)
    return sorted((frozenset(g) for g in members.values() if len(g) > 1), key=min)


def copy_groups(pairs: Sequence[Pair]) -> list[list[str]]:
    """The reported pairs joined into groups: everyone linked by a chain of similar pairs.

    Args:
        pairs: the reported pairs (at or above the threshold).

    Returns:
        The groups' member labels (sorted), largest group first.
    """
    labels = sorted({label for pair in pairs for label in (pair.first, pair.second)})
    index = {label: position for position, label in enumerate(labels)}
    groups = connected(len(labels), ((index[p.first], index[p.second]) for p in pairs))
    return sorted((sorted(labels[i] for i in group) for group in groups), key=lambda g: (-len(g), g))


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
    if not overlap:  # no matching code to show for it: no figure (a part's share alone is no evidence)
        part, part_share, whole = WHOLE, 0.0, 0.0
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
