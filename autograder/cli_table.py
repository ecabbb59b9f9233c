"""Command-line options declared in YAML tables (autograder/cli_flags.yml): one list per command."""

from __future__ import annotations

import argparse
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from autograder.config import FEEDBACK_LANGUAGES, ISOLATION_LEVELS
from autograder.executors import EXECUTORS

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


def add_flags(parser: argparse.ArgumentParser, command: str, table: Path = FLAG_TABLE) -> None:
    """Add a command's options from a table to its parser.

    Args:
        parser: the command's parser.
        command: its name in the table.
        table: the YAML file (default: the project's commands' table).
    """
    for spec in flag_table(table)[command]:
        options = {name: value for name, value in spec.items() if name not in ("flags", "key")}
        for name in ("type", "choices", "action"):
            if name in options and options[name] in FLAG_WORDS:
                options[name] = FLAG_WORDS[options[name]]
        parser.add_argument(*spec["flags"], **options)
