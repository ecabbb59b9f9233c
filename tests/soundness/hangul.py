"""Which student-facing texts carry no Korean outside quoted code (the `ko` language test's measure)."""

from __future__ import annotations

import re

from autograder.results import SubmissionResult

# Hangul syllables and compatibility jamo.
_HANGUL = re.compile("[\u3131-\u318e\uac00-\ud7a3]")
# Quoted code: `name` spans and fenced blocks; code identifiers and Python's own exception text
# may stay as they are inside them. HTML tags are markup, not text.
_QUOTED_CODE = re.compile(r"```.*?```|`[^`]*`|<[^>\n]*>", re.DOTALL)
# A word of a Latin-script language (two letters or more): text with none (numbers, punctuation,
# quoted code only) is in no language.
_WORD = re.compile(r"[A-Za-z]{2,}")


def lacks_korean(text: str) -> bool:
    """True when `text` has words outside quoted code and none of its text is Korean.

    Args:
        text: a student-facing text.

    Returns:
        Whether a Korean student would read it in another language.
    """
    rest = _QUOTED_CODE.sub("", text)
    return bool(_WORD.search(rest)) and not _HANGUL.search(rest)


def lines_lacking_korean(document: str) -> list[str]:
    """The lines of a rendered document (Markdown, a summary) without Korean, quoted code removed
    first (fenced blocks may span lines).

    Args:
        document: the whole text.

    Returns:
        The offending lines, stripped.
    """
    return [line.strip() for line in _QUOTED_CODE.sub("", document).splitlines() if lacks_korean(line)]


def student_texts(result: SubmissionResult) -> list[str]:
    """Every text a result shows the student: check messages, load problems and notes (part titles
    are the reports' to word, `autograder.i18n.part_title`).

    Args:
        result: one graded submission.

    Returns:
        The texts, in report order (duplicates kept: each is a message the student reads).
    """
    texts = [check.message for part in result.parts for check in part.checks if check.message]
    return texts + list(result.load_problems) + list(result.notes)


def untranslated(results: list[SubmissionResult]) -> list[str]:
    """The texts of `results` without Korean outside quoted code.

    Args:
        results: graded submissions (in Korean).

    Returns:
        Those texts, in order.
    """
    return [text for result in results for text in student_texts(result) if lacks_korean(text)]
