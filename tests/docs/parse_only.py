"""Run a documented `python ...` or `otter ...` command only as far as its argument parser.

Usage: python parse_only.py < COMMANDS.json > RESULTS.json
COMMANDS.json is a list of ["python", "-m", MODULE, ARGS...], ["python", SCRIPT, ARGS...] or
["otter", SUBCOMMAND, ARGS...]; all run in this one process (so their imports are paid once), each
from the current folder. RESULTS.json holds one [code, message] per command. Code 0: the real parser
accepted the arguments (then this stops before the program does its work); 2: the parser rejected
them (message: its own); 3: the program ended without ever parsing arguments; anything else: the
program failed before or while parsing. For `otter grade`, Otter's
own checks of its arguments (assignment name, output folder, autograder zip) also run; only the
start of its Docker containers is replaced by the stop.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import runpy
import sys
from pathlib import Path

EXIT_NEVER_PARSED = 3


class Parsed(BaseException):
    """Raised right after a successful parse (BaseException: a program's `except Exception` keeps out)."""


def stop_after_argparse() -> None:
    """Make argparse raise Parsed once the outermost parse succeeds."""
    parse_args, parse_known_args = (argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args)
    depth = [0]

    def patched_parse_args(self, args=None, namespace=None):
        depth[0] += 1
        try:
            parse_args(self, args, namespace)
        finally:
            depth[0] -= 1
        raise Parsed

    def patched_parse_known_args(self, args=None, namespace=None):
        result = parse_known_args(self, args, namespace)
        if depth[0] == 0:  # called directly by the program, not through parse_args or a subparser
            raise Parsed
        return result

    argparse.ArgumentParser.parse_args = patched_parse_args  # type: ignore[method-assign]
    argparse.ArgumentParser.parse_known_args = patched_parse_known_args  # type: ignore[method-assign]


def stop_otter_before_work() -> None:
    """Make click leaf commands raise Parsed once parsed; `otter grade` runs up to starting Docker."""
    import click
    import otter.grade

    invoke = click.Command.invoke

    def patched_invoke(self, ctx):
        if isinstance(self, click.Group) or ctx.info_name == "grade":
            return invoke(self, ctx)
        raise Parsed

    def no_docker(*_args, **_kwargs):
        raise Parsed

    click.Command.invoke = patched_invoke  # type: ignore[method-assign]
    otter.grade.launch_containers = no_docker


def run_python(args: list[str]) -> None:
    """`python ARGS` in this process, with sys.path[0] as Python sets it."""
    if args[0] == "-m":
        sys.path[0] = os.getcwd()
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.path[0] = str(Path(args[0]).resolve().parent)
        sys.argv = list(args)
        runpy.run_path(args[0], run_name="__main__")


def run_otter(args: list[str]) -> None:
    """`otter ARGS` as its console script runs it (sys.path[0]: the script's folder)."""
    from otter.cli import cli

    sys.path[0] = str(Path(sys.executable).parent)
    cli.main(args, prog_name="otter", standalone_mode=False)


def check(command: list[str]) -> tuple[int, str]:
    """Run one command up to its parser; returns (code, message) as described in the module docstring."""
    import click

    kind, args = command[0], command[1:]
    saved_path, saved_argv = list(sys.path), list(sys.argv)
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            (run_otter if kind == "otter" else run_python)(args)
    except Parsed:
        return 0, ""
    except SystemExit as stop:
        if stop.code in (0, None):
            return EXIT_NEVER_PARSED, errors.getvalue()
        return (stop.code if isinstance(stop.code, int) else 2), errors.getvalue() or str(stop.code)
    except click.ClickException as error:
        return 2, error.format_message()
    except Exception as error:  # e.g. Otter's ValueError for a missing assignment name
        return 4, f"{errors.getvalue()}{type(error).__name__}: {error}"
    finally:
        sys.path[:], sys.argv[:] = saved_path, saved_argv
    return EXIT_NEVER_PARSED, errors.getvalue()


def main() -> int:
    """Check every command read from stdin; write the results to stdout."""
    commands = json.load(sys.stdin)
    stop_after_argparse()
    if any(command[0] == "otter" for command in commands):
        stop_otter_before_work()
    json.dump([check(command) for command in commands], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
