"""Part 2's student-facing messages: `assignments/transformer_mt/messages/<lang>.yml`, then the engine's."""

# The engine asks this catalogue first while it grades Part 2 (Assignment.messages_dir), so the
# training modules' `autograder.i18n.t` finds these keys there. The modules here that may
# also run outside a grading (the checks on their own, the mask picture, the report sections) ask
# it through this `t`, which knows the folder whichever assignment the context names.

from __future__ import annotations

from pathlib import Path
from typing import Any

from autograder.i18n import t_in

MESSAGES_DIR = Path(__file__).resolve().parent / "messages"


def t(key: str, /, language: str | None = None, **fields: Any) -> str:
    """The message `key` in the current (or given) language: Part 2's catalogue, then the engine's.

    Args:
        key: the catalogue key, e.g. "checks.mask.sees_later".
        language: overrides the current language.
        **fields: values for the message's `{name}` fields.

    Returns:
        The text.

    Raises:
        KeyError: the key is in neither catalogue (a programming error, caught by the tests).
    """
    return t_in(MESSAGES_DIR, key, language=language, **fields)
