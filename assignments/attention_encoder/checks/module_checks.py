"""Check logic shared by Part 1's module parts (MultiHeadAttention, FFN, EncoderLayer, Encoder).

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
functions here turn that description into checks: it builds, its parameters match, eval-mode
outputs reproduce the reference under transplanted weights, padded keys are ignored while the
other positions are used, dropout is applied, gradients reach every parameter and equal the
reference's. Properties earn points only with evidence of work (see `require_context_use`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

import reference.model
from assignments.attention_encoder.checks.messages import t
from assignments.attention_encoder.checks.probes import reference_with_probes, used_probes
from autograder.checks.support import (
    CheckContext,
    NoMatch,
    Transplant,
    all_close,
    fail,
    max_difference,
    require,
    transplant_matching,
)

Case = list[Any]  # positional forward arguments
# (before, after, positions): cases that differ only where the mask hides keys; the outputs at
# `positions` (along dim 1) must not change.
PaddingPair = tuple[Case, Case, list[int]]


@dataclass
class ModulePart:
    """How to build and feed one graded module class."""

    cls: str
    ctor_args: Callable[[float], list[Any]]  # drop_prob -> constructor arguments
    make_cases: Callable[[torch.Generator], list[Case]]
    output_shape: Callable[[Case], tuple[int, ...]]
    layout_key: str  # message key of the layout hint
    method: str = "forward"
    substitute: dict[str, str] = field(default_factory=dict)
    drop_prob: float = 0.1
    # Submodule classes that take drop_prob themselves; at drop_prob=1.0 in train mode their output
    # may not depend on their input. They are fed a tensor shaped like the part's first input.
    dropout_submodules: tuple[str, ...] = ()
    padding_pair: Callable[[torch.Generator], PaddingPair] | None = None
    # (before, after, j): cases equal except at a visible position j; a module doing its work
    # changes some output at another position.
    context_change: Callable[[torch.Generator], tuple[Case, Case, int]] | None = None


def expect_tensor(value: Any, what: str, shape: tuple[int, ...] | None = None, floating: bool | None = None) -> Tensor:
    """Fail (in the assignment's language) unless value is a tensor with the given shape.

    Args:
        value: what the student returned.
        what: how to call it in the message, e.g. "Encoder's output".
        shape: the required shape, if any.
        floating: True for a float dtype, False for bool/integer, None for either.

    Returns:
        The value, now known to be a tensor.
    """
    if not isinstance(value, Tensor):
        key = "ae.output.none" if value is None else "ae.output.not_tensor"
        fail(t(key, what=what, kind=type(value).__name__), blocking=True)
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(t("ae.output.shape", what=what, got=tuple(value.shape), want=tuple(shape)))
    if floating is True and not value.is_floating_point():
        fail(t("ae.output.dtype", what=what, dtype=str(value.dtype)))
    if floating is False and value.is_floating_point():
        fail(t("ae.output.dtype_int", what=what, dtype=str(value.dtype)))
    return value


def student_module(ctx: CheckContext, part: ModulePart, drop_prob: float) -> int:
    """Build (once per run) the student's module for a dropout probability; returns its handle.

    Also records which of the offered probes the student's class actually built (`used`).
    """
    key = f"{part.cls}:{drop_prob}"
    if key not in ctx.cache:
        require(ctx, part.cls)
        handle = ctx.student.new(part.cls, part.ctor_args(drop_prob), seed=ctx.seed, substitute=part.substitute or None)
        ctx.cache[key] = handle
        used: dict[str, str] = {}
        if part.substitute:
            used = used_probes(part.substitute, [cls for _, cls in ctx.student.modules(handle)])
        ctx.cache[f"used:{key}"] = used
    handle_out: int = ctx.cache[key]
    return handle_out


def used(ctx: CheckContext, part: ModulePart, drop_prob: float) -> dict[str, str]:
    """The probes the student's module (for this drop_prob) was built with."""
    student_module(ctx, part, drop_prob)
    result: dict[str, str] = ctx.cache[f"used:{part.cls}:{drop_prob}"]
    return result


def reference_module(part: ModulePart, drop_prob: float, seed: int, substitute: dict[str, str]) -> nn.Module:
    """The reference module of a part, with the same probes standing in as for the student.

    Parameters initialised to a constant (LayerNorm's ones and zeros) get seeded random values,
    so that the transplant cannot pair same-shaped submodules wrongly and still reproduce the
    outputs, and a reused norm shows.
    """
    with reference_with_probes(substitute):
        torch.manual_seed(seed)
        module: nn.Module = getattr(reference.model, part.cls)(*part.ctor_args(drop_prob))
    gen = torch.Generator().manual_seed(seed + 1009)
    with torch.no_grad():
        for param in module.parameters():
            flat = param.reshape(-1)
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                param.add_(torch.randn(param.shape, generator=gen) * 0.2)
    return module


def run(ctx: CheckContext, part: ModulePart, handle: int, case: Case, mode: str, seed: int = 0) -> Any:
    """Run the student's module on one case."""
    return ctx.student.run(handle, part.method, case, mode=mode, seed=seed)


def reference_run(module: nn.Module, part: ModulePart, case: Case, mode: str) -> Tensor:
    """Run the reference module on one case (no gradients)."""
    module.train(mode == "train")
    with torch.no_grad():
        output: Tensor = getattr(module, part.method)(*case)
    return output


def cases(ctx: CheckContext, part: ModulePart) -> list[Case]:
    """The part's seeded cases."""
    return part.make_cases(torch.Generator().manual_seed(ctx.seed + 7))


def _output(value: Any, part: ModulePart) -> Tensor:
    return expect_tensor(value, t("ae.module.output_name", cls=part.cls), floating=True)


def check_builds(ctx: CheckContext, part: ModulePart) -> None:
    """It constructs with the documented arguments and returns a float tensor of the right shape."""
    handle = student_module(ctx, part, part.drop_prob)
    for case in cases(ctx, part):
        expect_tensor(
            run(ctx, part, handle, case, "eval"),
            t("ae.module.output_name", cls=part.cls),
            shape=part.output_shape(case),
            floating=True,
        )


def check_parameters(ctx: CheckContext, part: ModulePart) -> None:
    """Same number of parameter tensors, and the same shapes, as the documented layout."""
    handle = student_module(ctx, part, part.drop_prob)
    ref = reference_module(part, part.drop_prob, 0, used(ctx, part, part.drop_prob))
    expected = sorted(tuple(p.shape) for p in ref.parameters())
    actual = sorted(tuple(shape) for _, shape in ctx.student.params(handle))
    if actual != expected:
        fail(
            t(
                "ae.module.parameters",
                cls=part.cls,
                count=len(actual),
                numbers=f"{sum(torch.Size(s).numel() for s in actual):,}",
                want_count=len(expected),
                want_numbers=f"{sum(torch.Size(s).numel() for s in expected):,}",
                hint=t(part.layout_key),
            )
        )


def transplant(ctx: CheckContext, part: ModulePart, drop_prob: float | None = None) -> Transplant:
    """Load reference weights into the student's module under the mapping that reproduces it."""
    drop_prob = part.drop_prob if drop_prob is None else drop_prob
    key = f"transplant:{part.cls}:{drop_prob}"
    if key in ctx.cache:
        cached: Transplant | str = ctx.cache[key]
        if isinstance(cached, str):  # the reason no mapping reproduces the reference
            fail(cached)
        return cached
    handle = student_module(ctx, part, drop_prob)
    ref = reference_module(part, drop_prob, ctx.seed, used(ctx, part, drop_prob))
    if sorted(tuple(p.shape) for p in ref.parameters()) != sorted(
        tuple(shape) for _, shape in ctx.student.params(handle)
    ):
        reason = t("ae.module.layout", cls=part.cls, hint=t(part.layout_key))
        ctx.cache[key] = reason
        fail(reason)
    all_cases = cases(ctx, part)
    expected = [reference_run(ref, part, case, "eval") for case in all_cases]
    first_diff: list[float] = []

    def reproduces(_mapping: dict[str, str]) -> bool:
        for case, want in zip(all_cases, expected, strict=True):
            got = expect_tensor(
                run(ctx, part, handle, case, "eval"),
                t("ae.module.output_name", cls=part.cls),
                shape=tuple(want.shape),
                floating=True,
            )
            if not all_close(got, want):
                first_diff.append(max_difference(got, want))
                return False
        return True

    try:
        found = transplant_matching(ctx.student, handle, ref, reproduces, part.cls)
    except NoMatch:
        reason = t("ae.module.eval_output", cls=part.cls, difference=f"{first_diff[0]:.3g}", hint=t(part.layout_key))
        ctx.cache[key] = reason
        fail(reason)
    ctx.cache[key] = found
    return found


def check_eval_output(ctx: CheckContext, part: ModulePart) -> None:
    """Eval-mode outputs equal the reference's on every case under transplanted weights."""
    transplant(ctx, part)


def require_context_use(ctx: CheckContext, part: ModulePart) -> None:
    """Fail unless an output depends on the input at another (visible) position (eval mode).

    A module that returns its input, or works position by position, ignores padded keys for free;
    the padding property is only credited once positions do look at each other.
    """
    if part.context_change is None:
        return
    key = f"context-use:{part.cls}"
    if key not in ctx.cache:
        handle = student_module(ctx, part, part.drop_prob)
        before, after, j = part.context_change(torch.Generator().manual_seed(ctx.seed + 31))
        outputs = [_output(run(ctx, part, handle, case, "eval"), part) for case in (before, after)]
        others = [i for i in range(outputs[0].shape[1]) if i != j] if outputs[0].dim() >= 2 else []
        used_context = (
            outputs[0].shape == outputs[1].shape
            and bool(others)
            and not all_close(outputs[0][:, others], outputs[1][:, others])
        )
        ctx.cache[key] = None if used_context else t("ae.module.no_context", cls=part.cls, j=j)
    if ctx.cache[key]:
        fail(ctx.cache[key])


def check_padding(ctx: CheckContext, part: ModulePart) -> None:
    """Changing what sits at masked (padding) key positions never changes the outputs at the
    other positions, and outputs do depend on other visible positions (not vacuous)."""
    if part.padding_pair is None:
        raise RuntimeError(f"{part.cls} has no padding cases")
    handle = student_module(ctx, part, part.drop_prob)
    gen = torch.Generator().manual_seed(ctx.seed + 11)
    for _ in range(2):
        before, after, positions = part.padding_pair(gen)
        out_before = _output(run(ctx, part, handle, before, "eval"), part)
        out_after = _output(run(ctx, part, handle, after, "eval"), part)
        if out_before.shape != out_after.shape or not all_close(out_before[:, positions], out_after[:, positions]):
            fail(t("ae.module.padding_leaks", cls=part.cls))
    require_context_use(ctx, part)


def check_dropout(ctx: CheckContext, part: ModulePart) -> None:
    """Dropout acts in train mode only, with drop_prob, at the documented places."""
    handle = student_module(ctx, part, 0.5)
    case = cases(ctx, part)[0]
    eval_out = _output(run(ctx, part, handle, case, "eval"), part)
    train_out = _output(run(ctx, part, handle, case, "train", seed=1), part)
    if all_close(eval_out, train_out):
        fail(t("ae.module.dropout_never", cls=part.cls))
    moved = transplant(ctx, part, drop_prob=1.0)
    for case in cases(ctx, part):
        want = reference_run(moved.reference, part, case, "train")
        got = _output(run(ctx, part, moved.handle, case, "train"), part)
        if not all_close(got, want):
            fail(t("ae.module.dropout_place", cls=part.cls))
    _check_submodule_dropout(ctx, part, moved.handle)


def _check_submodule_dropout(ctx: CheckContext, part: ModulePart, handle: int) -> None:
    """Submodules that take drop_prob must drop everything at drop_prob=1.0 in train mode."""
    if not part.dropout_submodules:
        return
    shape = tuple(cases(ctx, part)[0][0].shape)
    gen = torch.Generator().manual_seed(ctx.seed + 19)
    inputs = [torch.randn(shape, generator=gen) for _ in range(2)]
    for name, class_name in ctx.student.modules(handle):
        if not name or class_name not in part.dropout_submodules:
            continue
        outputs = [
            expect_tensor(
                ctx.student.run(handle, f"{name}.forward", [x], mode="train"),
                t("ae.module.output_name", cls=f"{part.cls}.{name}"),
            )
            for x in inputs
        ]
        if not all_close(*outputs):
            fail(t("ae.module.submodule_dropout", cls=part.cls, name=name, class_name=class_name))


def check_gradients(ctx: CheckContext, part: ModulePart) -> None:
    """Gradients reach every parameter and equal the reference's (eval mode, same weights)."""
    moved = transplant(ctx, part)
    case = cases(ctx, part)[-1]
    ref = moved.reference
    ref.eval()
    ref.zero_grad(set_to_none=True)
    want_out = getattr(ref, part.method)(*case)
    upstream = torch.randn(want_out.shape, generator=torch.Generator().manual_seed(ctx.seed + 13))
    want_out.backward(upstream)
    result = ctx.student.run(moved.handle, part.method, case, mode="eval", seed=0, grad=upstream)
    grads = result["param_grads"]
    for ref_name, param in ref.named_parameters():
        student_name = moved.mapping[ref_name]
        got = grads.get(student_name)
        if got is None or not bool(got.abs().sum() > 0):
            fail(t("ae.module.no_gradient", cls=part.cls, name=student_name))
        want = param.grad
        if want is None:  # every reference parameter takes part in its output
            raise RuntimeError(f"reference parameter {ref_name} got no gradient")
        if not all_close(got, want):
            fail(t("ae.module.gradient", name=student_name, difference=f"{max_difference(got, want):.3g}"))
