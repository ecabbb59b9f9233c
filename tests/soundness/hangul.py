"""Which student-facing texts carry no Korean outside quoted code (the `ko` language test's measure)."""

from __future__ import annotations

import re

from autograder.results import SubmissionResult

# Hangul syllables and compatibility jamo.
_HANGUL = re.compile("[\u3131-\u318e\uac00-\ud7a3]")
# Quoted code: `name` spans and fenced blocks; code identifiers and Python's own exception text
# may stay as they are inside them.
_QUOTED_CODE = re.compile(r"```.*?```|`[^`]*`", re.DOTALL)


def lacks_korean(text: str) -> bool:
    """True when `text` has no Hangul outside quoted code (and is not blank).

    Args:
        text: a student-facing text.

    Returns:
        Whether a Korean student would read it in another language.
    """
    rest = _QUOTED_CODE.sub("", text)
    return bool(rest.strip()) and not _HANGUL.search(rest)


def student_texts(result: SubmissionResult) -> list[str]:
    """Every text a result shows the student: check messages, load problems and notes (part titles
    are the reports' to word, `autograder.reports.i18n.part_title`).

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
