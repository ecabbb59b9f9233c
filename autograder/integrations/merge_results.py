"""Merge gradings of the same submissions done in separate runs (unit parts on CPU, training on GPU)."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config as grader_config
from autograder.assignment import assignment_of
from autograder.cli_table import parse_command
from autograder.exit_codes import command_error
from autograder.i18n import t, use_language
from autograder.integrations.collect_submissions import safe_name
from autograder.integrations.upload_guard import UnsafeFile, read_beneath
from autograder.reports.common import ConfigParts, csv_text
from autograder.reports.files import RESERVED_STEMS, write_reports
from autograder.results import STATUS_ERROR, STATUS_GRADED, STATUS_UNREADABLE, CheckResult, PartResult, SubmissionResult

# The worse status wins: a grader error anywhere must stay visible in the gradebook.
STATUS_RANK = {STATUS_GRADED: 0, STATUS_UNREADABLE: 1, STATUS_ERROR: 2}
STATUS_MISSING = "missing"  # a roster repository without a graded submission
MERGE_MANIFEST = "merge-manifest.csv"
MAX_RESULT_BYTES = 16 * 1024 * 1024


class InvalidResult(ValueError):
    """A results file that does not match grader.yml (the message says what)."""


@dataclass
class MergeLog:
    """One row per input file or roster entry: what the merge did with it and why."""

    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (source, outcome, detail)

    def add(self, source: str, outcome: str, detail: str = "") -> None:
        """Record one input."""
        self.rows.append((source, outcome, detail))

    def write(self, path: Path) -> None:
        """Write the log as CSV (source, outcome, detail)."""
        path.write_text(csv_text([("source", "outcome", "detail"), *self.rows]), encoding="utf-8", newline="")


def validate(result: SubmissionResult, config_parts: ConfigParts) -> SubmissionResult:
    """Check a result against grader.yml's parts and recompute every total from its checks.

    Args:
        result: read from a `<stem>.json`.
        config_parts: grader.yml's `parts`.

    Returns:
        The result with titles, maxima and part points taken from grader.yml and the checks.

    Raises:
        InvalidResult: an unknown or repeated part or check, a check's maximum that differs from
            grader.yml, or points outside [0, maximum].
    """
    seen: set[str] = set()
    for part in result.parts:
        declared = config_parts.get(part.part)
        if declared is None:
            raise InvalidResult(f"unknown part {part.part!r}")
        if part.part in seen:
            raise InvalidResult(f"part {part.part!r} appears twice")
        seen.add(part.part)
        ids = [check.check_id for check in part.checks]
        if sorted(ids) != sorted(declared.checks):
            raise InvalidResult(f"part {part.part!r}: checks {ids} are not grader.yml's {sorted(declared.checks)}")
        for check in part.checks:
            top = float(declared.checks[check.check_id])
            if check.part != part.part or float(check.max_points) != top:
                raise InvalidResult(f"check {check.check_id!r}: maximum {check.max_points} (grader.yml: {top:g})")
            if not 0 <= float(check.points) <= top:
                raise InvalidResult(f"check {check.check_id!r}: {check.points} points of {top:g}")
        part.title, part.max_points = declared.title, float(declared.points)
        part.points = sum(float(c.points) for c in part.checks if not c.skipped)
    return result


def merge(first: SubmissionResult, later: SubmissionResult) -> SubmissionResult:
    """Fill in the parts `first` did not grade (skipped there) from `later`, where `later` graded them.

    A part graded in `first` is never replaced: a later run (e.g. the training job, which runs
    student code) can only add what the earlier one left out.

    Args:
        first: e.g. the unit-part grading.
        later: e.g. the training grading of the same file.

    Returns:
        A new result: parts merged, worse status, notes and load problems without duplicates,
        extras updated, grading times added.
    """
    graded_later = {part.part: part for part in later.parts if not part.skipped}
    parts = [graded_later[part.part] if part.skipped and part.part in graded_later else part for part in first.parts]
    status = max(first.status, later.status, key=lambda s: STATUS_RANK.get(s, 1))
    return SubmissionResult(
        first.submission,
        status,
        parts,
        load_problems=list(dict.fromkeys(first.load_problems + later.load_problems)),
        notes=list(dict.fromkeys(first.notes + later.notes)),
        extras={**first.extras, **later.extras},
        grading_seconds=first.grading_seconds + later.grading_seconds,
    )


def _results(folder: Path, config_parts: ConfigParts, log: MergeLog) -> dict[str, SubmissionResult]:
    found = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith((".results.json", ".reporter.json")) or path.stem.casefold() in RESERVED_STEMS:
            continue  # other reports, and batch files such as class.json: not results
        source = f"{folder.name}/{path.name}"
        try:
            data = read_beneath(folder, path.name, MAX_RESULT_BYTES)
            result = validate(SubmissionResult.from_json(json.loads(data.decode("utf-8"))), config_parts)
        except (UnsafeFile, InvalidResult, ValueError, KeyError, TypeError) as error:
            log.add(source, "refused", f"{type(error).__name__}: {error}")
            continue
        found[path.name[: -len(".json")]] = result
    return found


def merge_folders(
    folders: Sequence[Path], config_parts: ConfigParts, log: MergeLog
) -> tuple[list[str], list[SubmissionResult]]:
    """Merge the `<stem>.json` results of several report folders, stem by stem, in folder order.

    The first folder defines the submissions; a later folder may only fill in parts that were not
    graded before, for stems the first folder has. Every refused file is logged.

    Args:
        folders: report folders written by `python -m autograder grade`.
        config_parts: grader.yml's parts.
        log: where refused files are recorded.

    Returns:
        The stems (sorted) and their merged results.
    """
    merged: dict[str, SubmissionResult] = {}
    for index, folder in enumerate(folders):
        for stem, result in _results(folder, config_parts, log).items():
            source = f"{folder.name}/{stem}.json"
            if stem in merged:
                if result.submission != merged[stem].submission:
                    log.add(source, "refused", f"is about {result.submission!r}, not {merged[stem].submission!r}")
                    continue
                merged[stem] = merge(merged[stem], result)
                log.add(source, "merged")
            elif index > 0:
                log.add(
                    source, "refused", f"no submission {stem!r} in {folders[0].name} (later folders only add parts)"
                )
            elif result.submission in {r.submission for r in merged.values()}:
                log.add(source, "refused", f"a second result for {result.submission!r}")
            else:
                merged[stem] = result
                log.add(source, "merged")
    stems = sorted(merged)
    return stems, [merged[stem] for stem in stems]


def missing_result(
    submission: str, config_parts: ConfigParts, reason: str, skipped: Mapping[str, str], status: str = STATUS_MISSING
) -> SubmissionResult:
    """A row without a graded submission (a roster student's, an upload with nothing gradable): 0
    on every part.

    Args:
        submission: the row's file name.
        config_parts: grader.yml's parts.
        reason: the student-facing reason (e.g. `missing_reason`): the load problem, and the message
            of every check.
        skipped: part -> why it is skipped in this row (its checks carry that message instead), so
            that the row has the same possible points as the graded ones (empty: every part counts).
        status: the row's status.

    Returns:
        The row.
    """
    parts = [
        PartResult(
            name,
            part.title,
            float(part.points),
            0.0,
            [
                CheckResult(check, name, float(points), False, 0.0, skipped.get(name, reason), skipped=name in skipped)
                for check, points in part.checks.items()
            ],
        )
        for name, part in config_parts.items()
    ]
    return SubmissionResult(submission, status, parts, load_problems=[reason])


# The collector's manifest statuses (collect_submissions.Collected.status) with a catalogue text.
_MISSING_STATUSES = frozenset(
    {"clone-failed", "no-commit-before-deadline", "no-notebook", "several-notebooks", "refused", "collect-failed"}
)


def missing_reason(repo: str, status: str, detail: str) -> str:
    """Why a roster student has no graded submission, in the current language.

    Args:
        repo: the student's repository (`owner/name`).
        status: the collector's manifest status.
        detail: the collector's detail (git's error output, the files it found); quoted as is.

    Returns:
        The sentence: what happened, what it usually means, and the detail.
    """
    key = f"missing.{status}" if status in _MISSING_STATUSES else "missing.not_graded"
    text = t(key, repo=repo, status=status or "-")
    quoted = detail.replace("`", "'").strip()
    return text + (t("missing.detail", detail=quoted) if quoted else "")


def add_roster(
    stems: list[str], results: list[SubmissionResult], manifest: Path, config_parts: ConfigParts, log: MergeLog
) -> tuple[list[str], list[SubmissionResult]]:
    """Add a `missing` row for every repository of the collector's manifest.csv that has no result.

    Args:
        stems, results: from `merge_folders`.
        manifest: collect_submissions' manifest.csv (one row per roster repository).
        config_parts: grader.yml's parts.
        log: where each added row is recorded.

    Returns:
        Stems and results with the roster's missing students added, sorted by stem.
    """
    by_stem = dict(zip(stems, results, strict=True))
    # The parts the graded rows count (every part when no row was graded): a missing row counts the same.
    graded = [r for r in results if r.status != STATUS_MISSING]
    counted = {p.part for r in graded for p in r.parts if not p.skipped} if graded else set(config_parts)
    with manifest.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            repo = (row.get("repo") or "").strip()
            if not repo:
                continue
            stem = Path(row.get("file") or "").stem or safe_name(repo)
            if stem in by_stem:
                continue
            status, detail = row.get("status") or "", row.get("detail") or ""
            reason = missing_reason(repo, status, detail)
            skipped = {name: reason for name in config_parts if name not in counted}
            by_stem[stem] = missing_result(f"{stem}.ipynb", config_parts, reason, skipped)
            log.add(f"manifest:{repo}", STATUS_MISSING, reason)
    ordered = sorted(by_stem)
    return ordered, [by_stem[stem] for stem in ordered]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m autograder.integrations.merge_results DIR... --out DIR [--html] [--reporter-payload]`.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        The exit code (2 when no results were found).
    """
    args = parse_command("merge_results", argv, prog="python -m autograder.integrations.merge_results")
    config = grader_config.load_config(args.config)
    log = MergeLog()
    stems, results = merge_folders([f for f in args.folders if f.is_dir()], config.parts, log)
    if args.manifest is not None and args.manifest.is_file():
        with use_language(config.feedback.language):  # the missing students' reasons
            stems, results = add_roster(stems, results, args.manifest, config.parts, log)
    if not results:
        return command_error("no valid <stem>.json results in " + ", ".join(map(str, args.folders)))
    args.out.mkdir(parents=True, exist_ok=True)
    log.write(args.out / MERGE_MANIFEST)
    for source, outcome, detail in log.rows:
        if outcome != "merged":
            print(f"{outcome}: {source}: {detail}", file=sys.stderr)
    assignment = assignment_of(config)  # this front end's one load
    write_reports(results, stems, config, assignment, args.out, html=args.html, reporter=args.reporter_payload)
    print(f"merged {len(results)} submissions into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
