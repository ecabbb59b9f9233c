"""Trusted reference of Part 1 (attention and the encoder): the classes Part 2 gives students."""

# The re-export list is model.__all__ (one list, so the two cannot drift apart).
from .model import *  # noqa: F403
from .model import __all__ as __all__
