"""Shared helpers of the hidden checks: seeded cases, tensor comparison, weight transplant."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import torch
from torch import Tensor, nn

from autograder.checks.student import Student
from autograder.i18n import t
from autograder.transplant import candidate_mappings, describe_mismatch, owner_pairings

ATOL = 1e-5
RTOL = 1e-4
# The name the engine registers its context plugin under (autograder.runner); `check_context` looks
# it up.
CONTEXT_PLUGIN = "autograder-check-context"


class CheckFailed(AssertionError):
    """A check's verdict: the message is shown to the student as is.

    `blocking` marks failures that stop a whole part (the function is missing, or returns no
    tensor at all): when every check of a part fails, the report then shows that one cause.
    """

    def __init__(self, message: str, blocking: bool = False) -> None:
        super().__init__(message)
        self.blocking = blocking


def fail(message: str, blocking: bool = False) -> NoReturn:
    """Fail the current check with a student-facing message.

    Args:
        message: what was observed and what to look at.
        blocking: the part cannot run at all (see CheckFailed).
    """
    raise CheckFailed(message, blocking)


@dataclass
class CheckContext:
    """What every check needs: the student side, the seed and per-run caches."""

    student: Student  # the sandboxed worker, or the in-process reference (run-alone checks)
    seed: int = 0
    cache: dict[str, Any] = field(default_factory=dict)
    why_missing: Callable[[str], str | None] | None = None  # the loader's explanation of a gap


def check_context(request: Any, assignment: str) -> CheckContext:
    """The grading context for an assignment's `ctx` fixture.

    Set by the engine's plugin when it grades a submission; when the checks folder runs on its own
    (plain `pytest assignments/<name>/checks`), the assignment's reference student instead, so
    the suite grades the reference itself.

    Args:
        request: the fixture's pytest.FixtureRequest.
        assignment: the assignment's folder name.

    Returns:
        The context every check of the session shares.
    """
    plugin = request.config.pluginmanager.get_plugin(CONTEXT_PLUGIN)
    if plugin is not None:
        context: CheckContext = plugin.context
        return context
    return _reference_context(assignment)


@functools.cache  # one per assignment and process: the fixture and the declared checks share it
def _reference_context(assignment: str) -> CheckContext:
    """The context of an assignment's checks run on their own: its reference student, seed 0."""
    from autograder.assignment import load_assignment

    return CheckContext(student=load_assignment(assignment).reference_student(), seed=0)


def first_mismatch(actual: Tensor, expected: Tensor, close: bool) -> tuple[int, ...] | None:
    """Index of the first element where two same-shaped tensors disagree (None if they agree)."""
    bad = ~torch.isclose(actual.double(), expected.double(), rtol=RTOL, atol=ATOL) if close else actual != expected
    if not bool(bad.any()):
        return None
    return tuple(int(i) for i in bad.nonzero()[0])


def expect_tensor(value: Any, what: str, shape: tuple[int, ...] | None = None, floating: bool | None = None) -> Tensor:
    """Fail unless value is a tensor with the given shape (and float-ness).

    Args:
        value: what the student returned.
        what: how to call it in the message, e.g. "EncoderLayer.forward's output".
        shape: the required shape, if any.
        floating: True for a float dtype, False for bool/integer, None for either.

    Returns:
        The value, now known to be a tensor.
    """
    if not isinstance(value, Tensor):
        key = "checks.tensor.none" if value is None else "checks.tensor.not_tensor"
        fail(t(key, what=what, kind=f"`{type(value).__name__}`"), blocking=True)
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(t("checks.tensor.shape", what=what, got=f"`{tuple(value.shape)}`", want=f"`{tuple(shape)}`"))
    if floating is True and not value.is_floating_point():
        fail(t("checks.tensor.dtype_float", what=what, dtype=f"`{value.dtype}`"))
    if floating is False and value.is_floating_point():
        fail(t("checks.tensor.dtype_int", what=what, dtype=f"`{value.dtype}`"))
    return value


def max_difference(actual: Tensor, expected: Tensor) -> float:
    """Largest absolute difference (inf when shapes differ)."""
    if actual.shape != expected.shape:
        return float("inf")
    return float((actual.double() - expected.double()).abs().max()) if actual.numel() else 0.0


def all_close(actual: Tensor, expected: Tensor) -> bool:
    """Same shape and equal to the checks' float tolerance."""
    return actual.shape == expected.shape and bool(
        torch.allclose(actual.double(), expected.double(), rtol=RTOL, atol=ATOL)
    )


@dataclass
class Transplant:
    """A student module carrying the reference module's weights."""

    handle: int
    reference: nn.Module
    mapping: dict[str, str]  # reference name -> student name


def transplant_matching(
    student: Student, handle: int, reference_module: nn.Module, reproduces: Callable[[dict[str, str]], bool], what: str
) -> Transplant:
    """Find a weight mapping under which the student's module reproduces the reference.

    Tries candidate mappings (registration order, documented names, same-shaped submodules
    paired); each is loaded into the student's module and accepted when `reproduces` says the
    outputs agree.

    Args:
        student: the worker client.
        handle: the student's module.
        reference_module: a reference module of the same configuration.
        reproduces: given a mapping already loaded, whether the student's outputs match.
        what: the class name, for messages.

    Returns:
        The transplant that reproduced the reference.
    """
    ref_params = [(n, list(p.shape)) for n, p in reference_module.named_parameters()]
    student_params = student.params(handle)
    state = {n: p.detach().clone() for n, p in reference_module.named_parameters()}
    # The owner-level pairings cannot reorder sublayers made of many same-shaped tensors (two
    # attention blocks hold eight alike Linear layers), so a module that registers its
    # cross-attention before its self-attention would find no mapping: the last candidates pair
    # each direct submodule (a parameter of the module itself is its own) as a whole with one of
    # the student's holding the same shapes in the same order, in every order among alike ones
    # (at most 48 such mappings).
    sublayers = owner_pairings(ref_params, student_params, owner=lambda name: name.split(".", 1)[0])
    seen: list[dict[str, str]] = []
    for mapping in itertools.chain(candidate_mappings(ref_params, student_params), itertools.islice(sublayers, 48)):
        if mapping in seen:
            continue
        seen.append(mapping)
        student.load_state(handle, {mapping[n]: t for n, t in state.items()}, strict=False)
        if reproduces(mapping):
            return Transplant(handle, reference_module, mapping)
    if not seen:
        fail(t("checks.layout_mismatch", what=what, mismatch=describe_mismatch(ref_params, student_params)))
    raise NoMatch(len(seen))


class NoMatch(Exception):
    """No candidate mapping reproduced the reference (the caller words the message); args: how many were tried."""


def require(ctx: CheckContext, name: str) -> None:
    """Fail with a clear message when the submission does not define `name`.

    Args:
        ctx: the grading context.
        name: a function or class the part needs.
    """
    if not ctx.student.has(name):
        reason = ctx.why_missing(name) if ctx.why_missing else None
        key = "checks.not_defined_because" if reason else "checks.not_defined"  # str.format ignores unused fields
        fail(t(key, name=name, reason=reason), blocking=True)
