"""The command-line option tables (autograder/cli_flags.yml and the assignments' own) build their parsers."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from autograder.cli_table import FLAG_TABLE, add_flags, flag_table

ROOT = Path(__file__).resolve().parents[2]
TABLES = [FLAG_TABLE, *sorted((ROOT / "assignments").glob("*/reference_training.yml"))]


@pytest.mark.parametrize("table", TABLES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_command_of_every_table_builds_a_parser_with_unique_flags(table: Path) -> None:
    for command, specs in flag_table(table).items():
        parser = argparse.ArgumentParser(prog=command)
        add_flags(parser, command, table)  # argparse refuses a repeated flag or an unknown option
        names = [name for spec in specs for name in spec["flags"]]
        assert len(names) == len(set(names)), command


def test_words_stand_for_types_and_string_defaults_go_through_the_type() -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser, "classroom50 collect")
    args = parser.parse_args(["--repos", "roster.txt", "--deadline", "2026-12-01T23:59:59+09:00"])
    assert args.repos == Path("roster.txt") and args.out == Path("submissions") and args.notebook == ""
    publish = argparse.ArgumentParser()
    add_flags(publish, "classroom50 publish")
    with pytest.raises(SystemExit):  # `choices: language` is the configuration's languages
        publish.parse_args(["g", "--manifest", "m", "--out", "o", "--classroom", "c", "--slug", "s", "--language=fr"])
