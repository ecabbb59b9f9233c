"""`python -m autograder.integrations.classroom50 build | collect | publish`: the Classroom50 route."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.cli_table import subcommands_parser
from autograder.exit_codes import command_error
from autograder.i18n import command_language, use_language
from autograder.integrations.collect_submissions import deadline_moment, read_repo_list

if TYPE_CHECKING:
    from autograder.config import GraderConfig

PROG = "python -m autograder.integrations.classroom50"


def _config(path: Path | None, assignment: str | None, language: str | None) -> GraderConfig:
    from autograder.config import load_config

    overrides = {"assignment.name": assignment, "feedback.language": language}
    return load_config(path, {key: value for key, value in overrides.items() if value})


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        0 on success, 2 for bad input.
    """
    from autograder.config import ConfigError

    commands = ("classroom50 build", "classroom50 collect", "classroom50 publish")
    with use_language(command_language(argv)):  # --help's and usage errors'
        args = subcommands_parser("classroom50", commands, prog=PROG).parse_args(argv)
    try:
        return _run(args)
    except ConfigError as error:  # e.g. an unknown --assignment
        return command_error(error)


def _run(args: argparse.Namespace) -> int:
    if args.command == "build":
        from autograder.integrations.classroom50.build import BuildError, build

        config = _config(None, args.assignment, args.language)
        name = config.assignment_name()
        try:
            written = build(name, args.out, config.feedback.language)
        except BuildError as error:
            return command_error(error)
        print(f"wrote {len(written)} files to {args.out} (public checks of {name} only)")
        return 0
    if args.command == "collect":
        from autograder.integrations.classroom50.collect import collect_all

        try:
            deadline = deadline_moment(args.deadline)
            entries = read_repo_list(args.repos)
        except (ValueError, OSError) as error:
            return command_error(error)
        rows = collect_all(entries, deadline, args.out, args.notebook, args.base_url, args.classroom, args.slug)
        late = sum(row.late == "yes" for row in rows)
        ok = sum(row.status == "ok" for row in rows)
        print(f"{ok} of {len(rows)} repositories collected ({late} late); see {args.out / 'manifest.csv'}")
        return 0
    from autograder.assignment import assignment_of
    from autograder.integrations.classroom50.publish import GRADEBOOK, publish

    config = _config(args.config, args.assignment, args.language)
    if not args.manifest.is_file():
        return command_error(f"{args.manifest}: no such manifest")
    with use_language(config.feedback.language, assignment_of(config).messages_dir):
        gradebook = publish(args.grading, args.manifest, args.out, config, args.classroom, args.slug, args.base_url)
    published = sum(bool(row.result_file) for row in gradebook)
    print(f"published {published} results for {len(gradebook)} repositories; gradebook: {args.out / GRADEBOOK}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
