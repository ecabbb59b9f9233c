"""This assignment's student-facing messages: `assignments/attention_encoder/messages/<lang>.yml`.

Same format and fallback as the engine's catalogue (autograder.i18n): one key per message,
`str.format` fields, English where a language lacks a key. The language is the engine's current
one, so `feedback.language` in grader.yml governs these messages too.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from autograder.i18n import FALLBACK, current_language

MESSAGES_DIR = Path(__file__).resolve().parents[1] / "messages"


@cache
def catalogue(language: str) -> dict[str, str]:
    """All messages of one language.

    Args:
        language: "ko" or "en".

    Returns:
        key -> format string ({} when the language has no file).
    """
    path = MESSAGES_DIR / f"{language}.yml"
    if not path.is_file():
        return {}
    loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in loaded.items()}


def t(key: str, /, language: str | None = None, **fields: Any) -> str:
    """The message `key` in the current (or given) language, with its fields filled in.

    Args:
        key: the catalogue key, e.g. "ae.attention.masking".
        language: overrides the engine's current language.
        **fields: values for the message's `{name}` fields.

    Returns:
        The text.

    Raises:
        KeyError: the key is in no catalogue (a programming error, caught by the tests).
    """
    text = catalogue(language or current_language()).get(key)
    if text is None:
        text = catalogue(FALLBACK)[key]
    return text.format(**fields) if fields else text
