"""An in-process stand-in for the worker that answers with Part 1's reference.

The hidden checks talk to "the student" only through the worker's request interface (`has`,
`call`, `new`, `params`, `modules`, `load_state`, `run`). Run on their own, with no submission,
the checks talk to this adapter instead, so the suite grades the reference itself (every check
must pass) through the same requests the sandboxed worker serves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import reference.attention_encoder as part1
import reference.transformer_mt.model
from assignments.attention_encoder.checks.helpers import helpers_namespace
from assignments.attention_encoder.checks.module_checks import CHECKS
from autograder.checks.inprocess import ReferenceModuleStudent


class ReferenceStudent(ReferenceModuleStudent):
    """Implements the worker's request interface with the reference, in process."""

    NAMES = (*part1.GRADED, *part1.GIVEN)

    def __init__(self, grader_globals: dict[str, Any]) -> None:
        super().__init__(part1, grader_globals, helpers_namespace())

    def has(self, name: str) -> bool:
        """Whether the name is defined."""
        return name in self.NAMES

    @contextlib.contextmanager
    def building(self, cls: str, substitute: Mapping[str, str]) -> Iterator[Callable[..., Any]]:
        """The reference class, built with probes standing in for the substituted classes."""
        with CHECKS.reference_with_probes(substitute):
            yield getattr(reference.transformer_mt.model, cls)
