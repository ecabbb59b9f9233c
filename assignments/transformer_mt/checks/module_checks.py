"""Check logic shared by the module parts (DecoderLayer, Decoder, Transformer.forward).

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
functions here turn that description into the checks: it builds, its parameters match, eval-mode
outputs reproduce the reference under transplanted weights, it is causal, dropout is applied,
gradients reach every parameter and equal the reference's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

import reference.model
from assignments.transformer_mt.checks.probes import reference_with_probes
from autograder.checks.support import (
    CheckContext,
    NoMatch,
    Transplant,
    all_close,
    expect_tensor,
    fail,
    max_difference,
    require,
    transplant_matching,
)

Case = list[Any]  # positional forward arguments


@dataclass
class ModulePart:
    """How to build and feed one graded module class."""

    cls: str
    method: str
    ctor_args: Callable[[float], list[Any]]  # drop_prob -> constructor arguments
    make_cases: Callable[[torch.Generator], list[Case]]
    output_shape: Callable[[Case], tuple[int, ...]]
    causal_pair: Callable[[torch.Generator], tuple[Case, Case, int]]  # equal up to position k
    # Cases equal except at position j (returned third): a part doing its work changes some
    # output after j. Causality earns nothing when later outputs ignore earlier inputs.
    earlier_change: Callable[[torch.Generator], tuple[Case, Case, int]]
    layout_hint: str
    substitute: dict[str, str] = field(default_factory=dict)
    set_globals: dict[str, Any] = field(default_factory=dict)
    drop_prob: float = 0.1
    # Given submodule classes that take drop_prob themselves (their dropout is invisible from the
    # outside at drop_prob=1.0, where the sublayer's own dropout already zeroes their output);
    # they are fed a tensor shaped like the part's first input.
    dropout_submodules: tuple[str, ...] = ()


def reference_module(part: ModulePart, drop_prob: float, seed: int) -> nn.Module:
    """The reference module of a part, with the same probes standing in as for the student.

    Parameters initialised to a constant (LayerNorm's ones and zeros) get seeded random values,
    so that the transplant cannot pair same-shaped submodules wrongly and still reproduce the
    outputs (which would then make correct gradients look wrong, and hide a reused norm).
    """
    with reference_with_probes(part.substitute):
        torch.manual_seed(seed)
        module: nn.Module = getattr(reference.model, part.cls)(*part.ctor_args(drop_prob))
    gen = torch.Generator().manual_seed(seed + 1009)
    with torch.no_grad():
        for param in module.parameters():
            flat = param.reshape(-1)
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                param.add_(torch.randn(param.shape, generator=gen) * 0.2)
    return module


def student_module(ctx: CheckContext, part: ModulePart, drop_prob: float) -> int:
    """Build (once per run) the student's module for a dropout probability; returns its handle."""
    key = f"{part.cls}:{drop_prob}"
    if key not in ctx.cache:
        require(ctx, part.cls)
        ctx.cache[key] = ctx.student.new(
            part.cls,
            part.ctor_args(drop_prob),
            seed=ctx.seed,
            set_globals=part.set_globals or None,
            substitute=part.substitute or None,
        )
    handle: int = ctx.cache[key]
    return handle


def _run(ctx: CheckContext, part: ModulePart, handle: int, case: Case, mode: str, seed: int = 0) -> Any:
    return ctx.student.run(handle, part.method, case, mode=mode, seed=seed, set_globals=part.set_globals or None)


def _reference_run(module: nn.Module, part: ModulePart, case: Case, mode: str, seed: int = 0) -> Tensor:
    module.train(mode == "train")
    torch.manual_seed(seed)
    with torch.no_grad():
        output: Tensor = getattr(module, part.method)(*case)
    return output


def _cases(ctx: CheckContext, part: ModulePart) -> list[Case]:
    return part.make_cases(torch.Generator().manual_seed(ctx.seed + 7))


def check_builds(ctx: CheckContext, part: ModulePart) -> None:
    """It constructs with the documented arguments and returns a float tensor of the right shape."""
    handle = student_module(ctx, part, part.drop_prob)
    for case in _cases(ctx, part):
        output = _run(ctx, part, handle, case, "eval")
        expect_tensor(output, f"{part.cls}.{part.method}'s output", shape=part.output_shape(case), floating=True)


def check_parameters(ctx: CheckContext, part: ModulePart) -> None:
    """Same number of parameters, and the same tensor shapes, as the documented layout."""
    handle = student_module(ctx, part, part.drop_prob)
    expected = sorted(tuple(p.shape) for p in reference_module(part, part.drop_prob, 0).parameters())
    actual = sorted(tuple(shape) for _, shape in ctx.student.params(handle))
    if actual != expected:
        count = sum(torch.Size(s).numel() for s in actual)
        want = sum(torch.Size(s).numel() for s in expected)
        fail(
            f"{part.cls} has {len(actual)} parameter tensors ({count:,} numbers); the documented "
            f"layout has {len(expected)} ({want:,}). {part.layout_hint}"
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
    ref = reference_module(part, drop_prob, ctx.seed)
    cases = _cases(ctx, part)
    expected = [_reference_run(ref, part, case, "eval") for case in cases]
    first_diff: list[float] = []

    def reproduces(_mapping: dict[str, str]) -> bool:
        for case, want in zip(cases, expected, strict=True):
            got = expect_tensor(
                _run(ctx, part, handle, case, "eval"), f"{part.cls}'s output", shape=tuple(want.shape), floating=True
            )
            if not all_close(got, want):
                first_diff.append(max_difference(got, want))
                return False
        return True

    try:
        found = transplant_matching(ctx.student, handle, ref, reproduces, part.cls)
    except NoMatch:
        reason = (
            f"With the expected weights loaded, {part.cls}.{part.method} in eval mode differs from "
            f"the expected output (largest difference {first_diff[0]:.3g}). {part.layout_hint}"
        )
        ctx.cache[key] = reason
        fail(reason)
    ctx.cache[key] = found
    return found


def check_eval_output(ctx: CheckContext, part: ModulePart) -> None:
    """Eval-mode outputs equal the reference's on every case under transplanted weights."""
    transplant(ctx, part)


def require_context_use(ctx: CheckContext, part: ModulePart) -> None:
    """Fail unless later outputs depend on earlier inputs (eval mode).

    A module that returns its input, or anything computed position by position, is causal for
    free; properties about what a position may see are only credited once positions do see
    something. Cached per run (the causal and routing checks share it).
    """
    key = f"context-use:{part.cls}"
    if key not in ctx.cache:
        handle = student_module(ctx, part, part.drop_prob)
        before, after, j = part.earlier_change(torch.Generator().manual_seed(ctx.seed + 31))
        outputs = [
            expect_tensor(_run(ctx, part, handle, case, "eval"), f"{part.cls}'s output") for case in (before, after)
        ]
        used = (
            outputs[0].shape == outputs[1].shape
            and outputs[0].dim() >= 2
            and not all_close(outputs[0][:, j + 1 :], outputs[1][:, j + 1 :])
        )
        ctx.cache[key] = (
            None
            if used
            else (
                f"Changing the target at position {j} changed none of {part.cls}'s outputs at the "
                f"later positions {j + 1}.. (eval mode): later positions do not look at earlier ones, "
                "so the look-ahead property cannot be credited. The masked self-attention must let "
                "each position attend to the earlier positions."
            )
        )
    if ctx.cache[key]:
        fail(ctx.cache[key])


def check_causal(ctx: CheckContext, part: ModulePart) -> None:
    """Changing inputs after position k never changes outputs at positions <= k (eval mode),
    and later outputs do depend on earlier inputs (so the property is not vacuous)."""
    handle = student_module(ctx, part, part.drop_prob)
    gen = torch.Generator().manual_seed(ctx.seed + 11)
    for _ in range(2):
        before, after, k = part.causal_pair(gen)
        out_before = expect_tensor(_run(ctx, part, handle, before, "eval"), f"{part.cls}'s output")
        out_after = expect_tensor(_run(ctx, part, handle, after, "eval"), f"{part.cls}'s output")
        if not all_close(out_before[:, : k + 1], out_after[:, : k + 1]):
            fail(
                f"Changing the target after position {k} changed {part.cls}'s output at positions "
                f"0..{k}: a position can see the future. The target mask (trg_mask) must reach the "
                "masked self-attention."
            )
    require_context_use(ctx, part)


def check_dropout(ctx: CheckContext, part: ModulePart) -> None:
    """Dropout acts in train mode only, with drop_prob, at the documented places."""
    handle = student_module(ctx, part, 0.5)
    case = _cases(ctx, part)[0]
    eval_out = expect_tensor(_run(ctx, part, handle, case, "eval"), f"{part.cls}'s output")
    train_out = expect_tensor(_run(ctx, part, handle, case, "train", seed=1), f"{part.cls}'s output")
    if all_close(eval_out, train_out):
        fail(
            f"With drop_prob=0.5, {part.cls} gives the same output in train and eval mode: "
            "dropout is never applied. Use the drop_prob argument for every dropout."
        )
    moved = transplant(ctx, part, drop_prob=1.0)
    ref = moved.reference
    for case in _cases(ctx, part):
        want = _reference_run(ref, part, case, "train")
        got = _run(ctx, part, moved.handle, case, "train")
        if not all_close(expect_tensor(got, f"{part.cls}'s output"), want):
            fail(
                f"With drop_prob=1.0 in train mode, {part.cls}'s output differs from the expected "
                "one: dropout is missing, extra, or in another place. Apply each dropout to a "
                "sublayer's output before adding the residual, as in EncoderLayer."
            )
    _check_submodule_dropout(ctx, part, moved.handle)


def _check_submodule_dropout(ctx: CheckContext, part: ModulePart, handle: int) -> None:
    """Given submodules that take drop_prob must drop everything at drop_prob=1.0 in train mode:
    their output may then not depend on their input."""
    if not part.dropout_submodules:
        return
    shape = tuple(_cases(ctx, part)[0][0].shape)
    gen = torch.Generator().manual_seed(ctx.seed + 19)
    inputs = [torch.randn(shape, generator=gen) for _ in range(2)]
    for name, class_name in ctx.student.modules(handle):
        if not name or class_name not in part.dropout_submodules:
            continue
        outputs = [
            expect_tensor(
                ctx.student.run(handle, f"{name}.forward", [x], mode="train", set_globals=part.set_globals or None),
                f"{part.cls}.{name}'s output",
            )
            for x in inputs
        ]
        if not all_close(*outputs):
            fail(
                f"With drop_prob=1.0 in train mode, `{name}` ({class_name}) still passes its input "
                f"through: it was not built with {part.cls}'s drop_prob. Give every sublayer that "
                "takes a dropout probability the drop_prob argument, as EncoderLayer does."
            )


def check_gradients(ctx: CheckContext, part: ModulePart) -> None:
    """Gradients reach every parameter and equal the reference's (eval mode, same weights)."""
    moved = transplant(ctx, part)
    case = _cases(ctx, part)[-1]
    ref = moved.reference
    ref.eval()
    ref.zero_grad(set_to_none=True)
    want_out = getattr(ref, part.method)(*case)
    upstream = torch.randn(want_out.shape, generator=torch.Generator().manual_seed(ctx.seed + 13))
    want_out.backward(upstream)
    result = ctx.student.run(
        moved.handle, part.method, case, mode="eval", seed=0, set_globals=part.set_globals or None, grad=upstream
    )
    grads = result["param_grads"]
    for ref_name, param in ref.named_parameters():
        student_name = moved.mapping[ref_name]
        got = grads.get(student_name)
        if got is None or not bool(got.abs().sum() > 0):
            fail(
                f"No gradient reaches `{student_name}`: it does not influence {part.cls}'s "
                "output. Is the sublayer used in forward, and nothing detached?"
            )
        want = param.grad
        if want is None:  # every reference parameter takes part in its output
            raise RuntimeError(f"reference parameter {ref_name} got no gradient")
        if not all_close(got, want):
            fail(
                f"The gradient of `{student_name}` differs from the expected one (largest "
                f"difference {max_difference(got, want):.3g})."
            )
