"""The graded assignment's bundled-data variable, for shell front ends (`... bundled_data ROOT`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from autograder.assignment import bundled_data_of
from autograder.config import ConfigError, load_config
from autograder.exit_codes import command_error


def data_environment(root: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variable that points the graded assignment's code at the data bundled under `root`.

    Args:
        root: where the zip's data was unpacked or copied (e.g. /autograder: /autograder/data/...).
        environ: the environment (None: os.environ); a variable already set is kept.

    Returns:
        {variable: folder}, or nothing (no data declared, none bundled, or already set).
    """
    bundled = bundled_data_of(load_config())
    if bundled is None:
        return {}
    return bundled.environment(root, os.environ if environ is None else environ)


def main(argv: Sequence[str] | None = None) -> int:
    """Print `NAME=VALUE` lines (none when there is nothing to set) for the shell to export.

    Args:
        argv: [ROOT] (None: sys.argv[1:]).

    Returns:
        The exit code (2: no root given, or grader.yml is invalid).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m autograder.integrations.bundled_data ROOT", file=sys.stderr)
        return 2
    try:
        for name, value in data_environment(Path(args[0])).items():
            print(f"{name}={value}")
    except ConfigError as error:
        return command_error(error)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
