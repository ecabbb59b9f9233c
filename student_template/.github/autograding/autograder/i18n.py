"""The message catalogue of everything students read, in the language grader.yml's feedback section sets.

Messages live in `autograder/reports/messages/<language>.yml` (the engine's) and in the graded
assignment's own catalogue (`Assignment.messages_dir`, same format), one key per message, with
`str.format` fields. Code asks for a key (`t("engine.no_code")`); the text comes from the current
language's files, the assignment's first, falling back to English for a key not translated yet.
The grading entry points set the language and the assignment's catalogue from the configuration
(`use_language`); library calls without one speak English and know only the engine's messages.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import itertools
import os
import re
import sys
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final, NoReturn

MESSAGES_DIR = Path(__file__).resolve().parent / "reports" / "messages"
LANGUAGES = ("ko", "en")
FALLBACK = "en"
# What a command line speaks unless told otherwise, and grader.yml's feedback.language default: a
# student repository's public checks have no grader.yml to name one.
COURSE_LANGUAGE: Final = "ko"

_language: contextvars.ContextVar[str] = contextvars.ContextVar("feedback_language", default=FALLBACK)
# The graded assignment's own catalogue folder (Assignment.messages_dir), asked before the engine's.
_assignment_messages: contextvars.ContextVar[Path | None] = contextvars.ContextVar("assignment_messages", default=None)


@cache
def catalogue(language: str, folder: Path = MESSAGES_DIR) -> dict[str, str]:
    """All messages of one language.

    Args:
        language: "ko" or "en".
        folder: the catalogue's folder (the engine's, or an assignment's messages_dir).

    Returns:
        key -> format string ({} when an assignment's folder has no file for the language).
    """
    path = folder / f"{language}.yml"
    if folder != MESSAGES_DIR and not path.is_file():
        return {}
    import yaml  # here, not at the top: Classroom50's autograder.py installs PyYAML before a message is read

    loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in loaded.items()}


def current_language() -> str:
    """The language messages are produced in right now."""
    return _language.get()


@contextlib.contextmanager
def use_language(language: str, assignment_messages: Path | None = None) -> Iterator[None]:
    """Produce messages in `language` inside the block.

    Args:
        language: "ko" or "en".
        assignment_messages: the graded assignment's catalogue folder (Assignment.messages_dir);
            None keeps the current one.
    """
    token, folder_token = _language.set(_language.get()), _assignment_messages.set(_assignment_messages.get())
    set_language(language, assignment_messages)
    try:
        yield
    finally:
        _assignment_messages.reset(folder_token)
        _language.reset(token)


def set_language(language: str, assignment_messages: Path | None = None) -> None:
    """`use_language` for the rest of the enclosing `use_language` block (which undoes it), e.g. a
    command once its configuration is read. Args: as `use_language`'s."""
    if language not in LANGUAGES:
        raise ValueError(f"feedback language {language!r} is not supported (choose from {', '.join(LANGUAGES)})")
    _language.set(language)
    _assignment_messages.set(assignment_messages or _assignment_messages.get())


def t(key: str, /, language: str | None = None, **fields: Any) -> str:
    """The message `key` in the current (or given) language, with its fields filled in.

    Args:
        key: the catalogue key, e.g. "report.total" (positional: a message may have a {key} field);
            the graded assignment's catalogue is asked first, then the engine's.
        language: overrides the current language.
        **fields: values for the message's `{name}` fields.

    Returns:
        The text.

    Raises:
        KeyError: the key is in no catalogue (a programming error, caught by the tests).
    """
    return _message(key, language or _language.get(), _assignment_messages.get(), fields)


def t_in(folder: Path, key: str, /, language: str | None = None, **fields: Any) -> str:
    """`t` with `folder`'s catalogue asked first, whichever assignment is being graded: for an
    assignment's own code that may run outside a grading (its checks run on their own, tools).

    Args:
        folder: an assignment's catalogue folder (its messages_dir).
        key: the catalogue key.
        language: overrides the current language.
        **fields: values for the message's `{name}` fields.

    Returns:
        The text.

    Raises:
        KeyError: the key is in neither catalogue.
    """
    return _message(key, language or _language.get(), folder, fields)


def _message(key: str, language: str, folder: Path | None, fields: dict[str, Any]) -> str:
    """The text of `key`: the language's own (assignment's, then engine's), else English's (same order)."""
    folders = (MESSAGES_DIR,) if folder is None else (folder, MESSAGES_DIR)
    for lang in dict.fromkeys((language, FALLBACK)):
        for where in folders:
            text = catalogue(lang, where).get(key)
            if text is not None:
                return text.format(**fields) if fields else text
    raise KeyError(key)


def say(key: str, /, **fields: Any) -> None:
    """Print the message `key` (fields as `t`'s) on stderr: the staff's console."""
    print(t(key, **fields), file=sys.stderr)


def part_title(name: str, title: str) -> str:
    """A part's title in the current language: `part.<name>` from the graded assignment's own
    catalogue, else the engine's, where that language has one; else grader.yml's title.

    Args:
        name: the part's key in grader.yml.
        title: grader.yml's title.

    Returns:
        The title to show.
    """
    key, folder = f"part.{name}", _assignment_messages.get()
    engines = catalogue(_language.get()).get(key, title)
    return engines if folder is None else catalogue(_language.get(), folder).get(key, engines)


def assignment_title(title: str) -> str:
    """The assignment's title in the current language: `assignment.title` from the graded
    assignment's catalogue where that language has one, else the configured title.

    Args:
        title: grader.yml's (or assignment.yml's) title.

    Returns:
        The title to show.
    """
    folder = _assignment_messages.get()
    return title if folder is None else catalogue(_language.get(), folder).get("assignment.title", title)


# Where the worker found the innermost student line: "cell 15, line 13, in forward" (engine.py's labels).
_STUDENT_LINE = re.compile(r"cell (\d+), line (\d+)(?:, in (.+))?")


def student_line(where: str) -> str:
    """The worker's "cell 15, line 13, in forward" in the catalogue's words, as the load problems say
    cells and lines (another form is shown as it is). Args: where. Returns: the text."""
    if (found := _STUDENT_LINE.fullmatch(where)) is None:
        return where
    cell, line, function = found.groups()
    return t("engine.where_in" if function else "engine.where", cell=cell, line=line, function=function)


def command_language(argv: Sequence[str] | None) -> str:
    """The language of a command line's --help, usage errors and console until a configuration says otherwise.

    Args:
        argv: the arguments after the program name (None: sys.argv[1:]); read before any parser.

    Returns:
        Its `--language` value, else env FEEDBACK_LANGUAGE, else the course's: one of LANGUAGES.
    """
    chosen = os.environ.get("FEEDBACK_LANGUAGE", "")
    for flag, value in itertools.pairwise([*(sys.argv[1:] if argv is None else argv), ""]):
        if flag == "--language" or flag.startswith("--language="):
            chosen = value if flag == "--language" else flag.partition("=")[2]
    return chosen if chosen in LANGUAGES else COURSE_LANGUAGE


class _CatalogueFormatter(argparse.HelpFormatter):
    """argparse's help layout, its "usage: " the catalogue's (argparse words it by gettext alone)."""

    def add_usage(self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, t("cli.frame.usage") if prefix is None else prefix)


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser in the current language: besides the texts its caller adds, argparse's own
    words (the usage line, the groups' titles, -h's help, the `error:` line) come from `cli.frame.*`.
    Build it inside `use_language(command_language(argv))`; its subcommands' parsers are of this class too.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(add_help=False, formatter_class=_CatalogueFormatter, **options)
        self._positionals.title = t("cli.frame.positionals")
        self._optionals.title = t("cli.frame.options")
        self.add_argument("-h", "--help", action="help", help=t("cli.frame.help"))  # argparse's own -h, reworded

    def error(self, message: str) -> NoReturn:
        """argparse's: the usage line and `PROG: error: MESSAGE` on stderr, exit 2; in the catalogue's words."""
        self.print_usage(sys.stderr)
        self.exit(2, t("cli.frame.error", prog=self.prog, message=message) + "\n")
