"""Entry point of `python -m autograder` (see autograder.cli)."""

import os
import signal
import sys

from autograder.i18n import command_language, t, use_language

with use_language(command_language(sys.argv[1:])):  # as --help's: the configuration is not read yet
    _STOPPED_LINE = (t("progress.interrupted_plain") + "\n").encode()


def _stop_while_loading(_signum: int, _frame: object) -> None:
    """Ctrl-C before a batch starts (modules still loading, the configuration being read): nothing
    is stored or started yet, so answer and exit at once. A KeyboardInterrupt raised instead could
    land inside a C extension's import (numpy, torch), which turns it into an ImportError or loses it."""
    os.write(2, _STOPPED_LINE)
    os._exit(130)  # autograder.exit_codes.EXIT_INTERRUPTED; nothing of the interpreter's exit runs


if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where SIGINT is ignored (a background job)
    signal.signal(signal.SIGINT, _stop_while_loading)  # the batch restores Python's own (cli._command_grade)

from autograder.cli import run  # noqa: E402  (after the handler: this import loads most of the grader)

run()
