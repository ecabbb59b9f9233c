"""Student-derived text made inert in Markdown and CSV: no headings, tables, images, links or HTML it did not come with.

Every string that may carry student text (file names, exception messages, outputs, check
messages that quote them) goes through `md_text` or `md_code` before it is placed in a Markdown
report, and every gradebook cell through `csv_cell`.
"""

from __future__ import annotations

import re

# CommonMark lets a backslash escape any ASCII punctuation; these start structure anywhere in a
# line (headings inside list items, tables, emphasis, links, images, code, math). HTML is
# neutralised by entities; list markers only matter at the start (see `_escape_start`).
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", **{char: "\\" + char for char in "\\`*_[]#!|~$"}})
_LIST_START = re.compile(r"^(\s*)([-+]|\d{1,9}[.)])")
_CODE_SPAN = re.compile(r"`([^`\n]{1,500})`")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def _escape_start(line: str) -> str:
    # "- x" or "1. x" after a list marker of ours would open a nested list: escape the marker's last character.
    return _LIST_START.sub(lambda m: f"{m[1]}{m[2][:-1]}\\{m[2][-1]}", line, count=1)


def md_code(text: str, table: bool = False) -> str:
    """Text as one inline code span, whatever backticks it holds.

    Args:
        text: any text (line breaks become spaces).
        table: the span sits in a table cell (pipes escaped, as GFM tables require).

    Returns:
        e.g. "`alice.ipynb`", or "`` a`b ``".
    """
    flat = " ".join(str(text).split("\n")).replace("\r", " ")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    if table:
        flat = flat.replace("|", "\\|")
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") or longest else flat
    return f"{fence}{padded}{fence}"


def md_text(text: str, table: bool = False) -> str:
    """Text on one line that Markdown shows literally, keeping its simple `code` spans.

    Punctuation that starts Markdown structure is backslash-escaped, `<`, `>` and `&` become
    entities (no HTML), line breaks become `<br>` (so no line can start a heading, a list or a
    table row), and backtick code spans stay code spans (their content is literal anyway).

    Args:
        text: any text, possibly written by a student.
        table: the text sits in a table cell (pipes inside code spans escaped too).

    Returns:
        Markdown-safe text.
    """
    lines = []
    for line in str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        pieces, last = [], 0
        for match in _CODE_SPAN.finditer(line):
            pieces.append(line[last : match.start()].translate(_ESCAPES))
            pieces.append(md_code(match.group(1), table=table))
            last = match.end()
        pieces.append(line[last:].translate(_ESCAPES))
        lines.append(_escape_start("".join(pieces).strip()))
    # No line holds a line break any more: blank lines at either end go, those between become <br>s.
    return "\n".join(lines).strip("\n").replace("\n", "<br>")


def csv_cell(value: str) -> str:
    """A CSV cell that spreadsheets will not run as a formula.

    Cells starting with `=`, `+`, `-`, `@`, a tab or a carriage return get a leading apostrophe
    (numbers such as -1.5 are left alone).

    Args:
        value: the cell's text.

    Returns:
        The safe text.
    """
    text = str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text
