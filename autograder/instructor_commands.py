"""Command line for course staff: `report OUT --compare OLD_OUT` (regrade diff) and `export OUT` (LMS CSVs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.exit_codes import EXIT_OK, command_error
from autograder.i18n import say, set_language, use_language
from autograder.reports.common import write_csv
from autograder.reports.regrade import PointsChange

if TYPE_CHECKING:
    from autograder.assignment import Assignment


def print_changes(changes: Sequence[PointsChange], path: Path) -> None:
    """Tell course staff on stderr how many students a regrade changed and where the table is.

    Args:
        changes: the regrade diff rows.
        path: the CSV written.
    """
    say("console.regrade", count=len({change.submission for change in changes}), path=path)
    for change in changes:
        if change.level == "total":
            old = "-" if change.old is None else f"{change.old:g}"
            new = "-" if change.new is None else f"{change.new:g}"
            print(f"  {change.submission}: {old} -> {new}", file=sys.stderr)


def command_compare(out_dir: Path, old_out: Path, assignment: Assignment) -> int:
    """`report OUT_DIR --compare OLD_OUT`: write OUT_DIR/regrade.csv, the changes since OLD_OUT.

    Args:
        out_dir: the report folder of the new grading.
        old_out: the report folder of the earlier grading (a copy kept before regrading).
        assignment: the assignment out_dir's stored batch graded (its catalogue), loaded by the CLI.

    Returns:
        The exit code.
    """
    from autograder.batch import load_stored_batch
    from autograder.reports.regrade import REGRADE_NAME, diff_results, render_regrade_csv

    try:
        config, new, _, _ = load_stored_batch(out_dir)
        _, old, _, _ = load_stored_batch(old_out)
    except FileNotFoundError as error:
        return command_error(error)
    changes = diff_results({r.submission: r for r in old}, {r.submission: r for r in new})
    path = out_dir / REGRADE_NAME
    with use_language(config.feedback.language, assignment.messages_dir):
        write_csv(path, render_regrade_csv(changes))
        print_changes(changes, path)
    return EXIT_OK


def command_export(args: argparse.Namespace) -> int:
    """`export OUT_DIR [--roster FILE]`: the LMS CSVs of a report folder's stored results.

    Args:
        args: the parsed `export` arguments.

    Returns:
        The exit code.
    """
    from autograder.batch import load_stored_batch
    from autograder.reports.lms import (
        CANVAS_NAME,
        LONG_NAME,
        RosterError,
        match,
        read_roster,
        render_canvas_csv,
        render_long_csv,
    )

    try:
        config, results, _, missing = load_stored_batch(args.out_dir)
        roster = read_roster(args.roster, args.match_column) if args.roster else None
    except (FileNotFoundError, RosterError) as error:
        return command_error(error)
    set_language(config.feedback.language)  # the summary lines in the staff's language
    dest = args.dest or args.out_dir
    dest.mkdir(parents=True, exist_ok=True)
    title = config.assignment.title or config.assignment.name or "assignment"
    students: dict[str, str] = {}
    if roster is not None:
        matching = match(roster, results)
        canvas = dest / CANVAS_NAME
        write_csv(canvas, render_canvas_csv(roster, matching, args.canvas_column or title))
        students = {result.submission: roster.rows[i]["Student"] for i, result in matching.by_row.items()}
        say("console.canvas", path=canvas, matched=len(matching.by_row), rows=len(roster.rows))
        if matching.unmatched:
            say("console.not_on_roster", count=len(matching.unmatched), names=", ".join(matching.unmatched))
        if matching.ambiguous:
            say("console.ambiguous", names=", ".join(matching.ambiguous))
    long_path = dest / LONG_NAME
    write_csv(long_path, render_long_csv(results, title, students))
    say("console.long_csv", path=long_path, count=len(results))
    if missing:
        say("console.not_graded_yet", count=len(missing), names=", ".join(missing))
    return EXIT_OK
