"""Command-line options declared in YAML tables (autograder/cli_flags.yml), their --help texts in the catalogues."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from autograder.config import FEEDBACK_LANGUAGES, ISOLATION_LEVELS
from autograder.executors import EXECUTORS
from autograder.i18n import CommandParser, command_language, t, t_in, use_language

FLAG_TABLE = Path(__file__).with_name("cli_flags.yml")
# What a table's `type`, `choices` and `action` words stand for (other words go to argparse as they are).
FLAG_WORDS: dict[str, Any] = {
    "path": Path,
    "int": int,
    "float": float,
    "optional": argparse.BooleanOptionalAction,
    "language": FEEDBACK_LANGUAGES,
    "isolation": ISOLATION_LEVELS,
    "executor": EXECUTORS,
}


@cache
def flag_table(path: Path = FLAG_TABLE) -> dict[str, list[dict[str, Any]]]:
    """A table of options, read once.

    Args:
        path: the YAML file (default: the project's commands' table).

    Returns:
        Command name -> its options, in the order --help lists them.
    """
    table: dict[str, list[dict[str, Any]]] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return table


def command_text(command: str, name: str, table: Path = FLAG_TABLE) -> str:
    """A --help text of a table's `command` ("grade", "classroom50 build") in the current language:
    `cli.<command>.<name>` (a space read as a dot; name: "description", "summary" or an option's first
    flag) from the catalogue beside the table (an assignment's messages/), then the engine's."""
    return t_in(table.parent / "messages", f"cli.{command.replace(' ', '.')}.{name}")


def add_flags(parser: argparse.ArgumentParser, command: str, table: Path = FLAG_TABLE) -> None:
    """Add a command's options from a table to its parser, their help texts from the catalogue.

    Args:
        parser: the command's parser.
        command: its name in the table.
        table: the YAML file (default: the project's commands' table).
    """
    for spec in flag_table(table)[command]:
        options = {name: value for name, value in spec.items() if name not in ("flags", "key")}
        options["help"] = command_text(command, spec["flags"][0], table)
        for name in ("type", "choices", "action"):
            if name in options and options[name] in FLAG_WORDS:
                options[name] = FLAG_WORDS[options[name]]
        parser.add_argument(*spec["flags"], **options)


def subcommands_parser(program: str, commands: Sequence[str], **options: Any) -> argparse.ArgumentParser:
    """A program's parser of subcommands in the current language, its `command` the one parsed.

    Args:
        program: its catalogue name (its description is `cli.<program>.description`).
        commands: table command names, in the order --help lists them (a subcommand is the last word).
        **options: the parser's, e.g. prog.
    """
    parser = CommandParser(description=t(f"cli.{program}.description"), **options)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        summary, description = command_text(command, "summary"), command_text(command, "description")
        subparser = subparsers.add_parser(command.rpartition(" ")[2], help=summary, description=description)
        add_flags(subparser, command)
    return parser


def parse_command(command: str, argv: Sequence[str] | None = None, table: Path = FLAG_TABLE, **options: Any) -> Any:
    """Parse a program's command line by one `command` of a flag table, in the command line's language.

    Args:
        command: the table's command ("grade", "classroom50 build", ...).
        argv: the arguments after the program name (None: sys.argv[1:]).
        table: the flag table.
        **options: the parser's options (prog).

    Returns:
        argparse's Namespace.
    """
    with use_language(command_language(argv)):  # the texts are read as the parser is built
        parser = CommandParser(description=command_text(command, "description", table), **options)
        add_flags(parser, command, table)
        return parser.parse_args(argv)
