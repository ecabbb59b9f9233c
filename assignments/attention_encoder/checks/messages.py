"""Part 1's student-facing messages: `assignments/attention_encoder/messages/<lang>.yml`, then the engine's."""

# The engine asks this catalogue first while it grades Part 1 (Assignment.messages_dir). The checks,
# which also run on their own, and the training part ask it through this `t` (autograder.i18n.t_in:
# the engine's format and fallback, in the engine's current language, which grader.yml's
# feedback.language sets).

from __future__ import annotations

import functools
from pathlib import Path

from autograder.i18n import t_in

MESSAGES_DIR = Path(__file__).resolve().parents[1] / "messages"

# t(key, /, language=None, **fields): the message in the current (or given) language, Part 1's catalogue first.
t = functools.partial(t_in, MESSAGES_DIR)
