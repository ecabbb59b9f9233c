"""Merge gradings of the same submissions done in separate runs (unit parts on CPU, training on GPU)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder import config as grader_config
from autograder.reports.common import is_skipped
from autograder.reports.feedback import write_feedback
from autograder.reports.files import RESERVED_STEMS, write_reports
from autograder.reports.submission_json import read_submission_json
from autograder.results import STATUS_ERROR, STATUS_GRADED, STATUS_UNREADABLE, SubmissionResult

# The worse status wins: a grader error anywhere must stay visible in the gradebook.
STATUS_RANK = {STATUS_GRADED: 0, STATUS_UNREADABLE: 1, STATUS_ERROR: 2}


def merge(first: SubmissionResult, later: SubmissionResult) -> SubmissionResult:
    """Take every part that `later` graded (not skipped) from it, the rest from `first`.

    Args:
        first: e.g. the unit-part grading.
        later: e.g. the training grading of the same file.

    Returns:
        A new result: parts merged, worse status, notes and load problems without duplicates,
        extras updated, grading times added.
    """
    graded_later = {part.part: part for part in later.parts if not is_skipped(part)}
    parts = [graded_later.pop(part.part, part) for part in first.parts] + list(graded_later.values())
    status = max(first.status, later.status, key=lambda s: STATUS_RANK.get(s, 1))
    return SubmissionResult(
        first.submission, status, parts,
        load_problems=list(dict.fromkeys(first.load_problems + later.load_problems)),
        notes=list(dict.fromkeys(first.notes + later.notes)),
        extras={**first.extras, **later.extras},
        grading_seconds=first.grading_seconds + later.grading_seconds)


def _results(folder: Path) -> dict[str, SubmissionResult]:
    found = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith((".results.json", ".reporter.json")):
            continue
        found[path.name[: -len(".json")]] = read_submission_json(path)
    return found


def merge_folders(folders: Sequence[Path]) -> tuple[list[str], list[SubmissionResult]]:
    """Merge the `<stem>.json` results of several report folders, stem by stem, in folder order.

    Args:
        folders: report folders written by `python -m autograder grade`.

    Returns:
        The stems (sorted) and their merged results.
    """
    merged: dict[str, SubmissionResult] = {}
    for folder in folders:
        for stem, result in _results(folder).items():
            merged[stem] = merge(merged[stem], result) if stem in merged else result
    stems = sorted(stem for stem in merged if stem not in RESERVED_STEMS)
    return stems, [merged[stem] for stem in stems]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m autograder.integrations.merge_results DIR... --out DIR [--html] [--reporter-payload]`.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        The exit code (2 when no results were found).
    """
    parser = argparse.ArgumentParser(prog="python -m autograder.integrations.merge_results")
    parser.add_argument("folders", nargs="+", type=Path, help="report folders, later ones win per part")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--html", action="store_true")
    parser.add_argument("--reporter-payload", action="store_true")
    args = parser.parse_args(argv)
    stems, results = merge_folders([f for f in args.folders if f.is_dir()])
    if not results:
        print("error: no <stem>.json results in " + ", ".join(map(str, args.folders)), file=sys.stderr)
        return 2
    config = grader_config.load_config(args.config)
    write_reports(results, stems, config, args.out)
    write_feedback(results, stems, config, args.out, html=args.html, reporter=args.reporter_payload)
    print(f"merged {len(results)} submissions into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
