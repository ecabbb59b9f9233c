"""Part 1's student-facing messages: `assignments/attention_encoder/messages/<lang>.yml`, then the engine's."""

# The engine asks this catalogue first while it grades Part 1 (Assignment.messages_dir). The checks,
# which also run on their own, and the training part ask it through this `t` (autograder.i18n.t_in:
# the engine's format and fallback, in the engine's current language, which grader.yml's
# feedback.language sets).

from __future__ import annotations

from pathlib import Path
from typing import Any

from autograder.i18n import t_in

MESSAGES_DIR = Path(__file__).resolve().parents[1] / "messages"


def t(key: str, /, language: str | None = None, **fields: Any) -> str:
    """The message `key` in the current (or given) language: Part 1's catalogue, then the engine's.

    Args:
        key: the catalogue key, e.g. "ae.attention.masking".
        language: overrides the engine's current language.
        **fields: values for the message's `{name}` fields.

    Returns:
        The text.

    Raises:
        KeyError: the key is in neither catalogue (a programming error, caught by the tests).
    """
    return t_in(MESSAGES_DIR, key, language=language, **fields)
