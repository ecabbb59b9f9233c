"""Declared checks: the common checks of an assignment named by kind in its checks/declared.yml."""

# An assignment's checks/declared.yml lists, per part, the graded function or module class and its
# checks by kind (docs/ASSIGNMENTS.md, "Declared checks"); `declared_checks` turns them into the
# `test_<id>` functions of a module of checks/, so the engine's runner collects, runs and reports
# them as any other check. Points stay in assignment.yml; a part whose assignment.yml gives no
# `gate` takes its credit rule from the kinds (`read_settings`). What is not common stays a
# hand-written `test_<id>` function beside them.

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from autograder.assignment_folder import MODULE_KINDS, read_declared
from autograder.checks.support import CheckContext, all_close, check_context, expect_tensor, fail, max_difference
from autograder.checks.support import require as require_defined
from autograder.i18n import t, t_in


def declared_checks(module_file: str, part: str | None = None) -> dict[str, Callable[..., None]]:
    """The `test_<id>` functions of the declared checks, for a module of checks/ to bind.

    Args:
        module_file: that module's `__file__` (its folder is the checks folder).
        part: bind only this part's checks (a module that also holds the part's hand-written
            ones); None: every part's, each function then carrying its part as `.part` (the
            runner's unit when a worker failure stops the rest of a part).

    Returns:
        test name -> function taking pytest's `request`.
    """
    checks_dir = Path(module_file).resolve().parent
    package = f"assignments.{checks_dir.parent.name}"
    tests: dict[str, Callable[..., None]] = {}
    for part_name, declared in read_declared(checks_dir.parent).items():
        for check_id, spec in declared["checks"].items():
            if part in (None, part_name):
                tests[f"test_{check_id}"] = check = _declared_test(package, declared, spec)
                if part is None:
                    check.part = part_name  # type: ignore[attr-defined]
    return tests


def _declared_test(package: str, part: dict[str, Any], spec: dict[str, Any]) -> Callable[..., None]:
    """One declared check as a pytest function (its context from the engine, else the reference)."""

    def check(request: Any) -> None:
        ctx = check_context(request, package.rpartition(".")[2])
        if spec["kind"] in MODULE_KINDS:
            engine, module_part = resolve(package, part["engine"]), resolve(package, part["module"])
            getattr(engine, f"check_{spec['kind']}")(ctx, module_part)
        else:
            _function_check(ctx, package, part, spec)

    return check


@functools.cache
def resolve(package: str, target: str) -> Any:
    """`module:name` relative to the assignment's package (`checks.module_checks:CHECKS`).

    Args:
        package: the assignment's package, e.g. "assignments.attention_encoder".
        target: "module:name", the module below that package.

    Returns:
        The named object.
    """
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


def generated(spec: Any, gen: torch.Generator) -> Any:
    """One argument of a declared case, drawn from the seeded generator.

    `{randn: shape, scale: s}` a normal tensor (times s), `{uniform: shape, low: a, high: b}`,
    `{causal: n}` a bool (n, n) lower-triangular mask, `{mask: shape}` a random bool mask
    whose first key is always visible; a list is a list of arguments; anything else is itself.

    Args:
        spec: the declared argument.
        gen: the case's generator.

    Returns:
        The argument.
    """
    if isinstance(spec, list):
        return [generated(item, gen) for item in spec]
    if not isinstance(spec, dict):
        return spec
    if "randn" in spec:
        return torch.randn(spec["randn"], generator=gen) * float(spec.get("scale", 1.0))
    if "uniform" in spec:
        low, high = float(spec.get("low", 0.0)), float(spec.get("high", 1.0))
        return low + (high - low) * torch.rand(spec["uniform"], generator=gen)
    if "causal" in spec:
        return torch.ones(spec["causal"], spec["causal"], dtype=torch.bool).tril()
    if "mask" in spec:
        mask = torch.rand(spec["mask"], generator=gen) > 0.4
        mask[..., 0] = True
        return mask
    raise ValueError(f"unknown generated argument {spec!r}")


def _function_check(ctx: CheckContext, package: str, part: dict[str, Any], spec: dict[str, Any]) -> None:
    """A function kind: the student's function on each declared case against the reference's."""
    name = part["function"]
    reference = resolve(package, part.get("reference") or f"reference:{name}")
    gen = torch.Generator().manual_seed(ctx.seed + int(spec.get("seed", 101)))
    require_defined(ctx, name)
    what = t("checks.declared.output", function=name)
    for case in generated(spec.get("cases") or part["cases"], gen):
        want: Tensor = reference(*case)
        got = expect_tensor(ctx.student.call(name, case), what, shape=tuple(want.shape), floating=True)
        if spec["kind"] == "values" and not all_close(got, want):
            key, fields = spec.get("message", "checks.declared.values"), {"function": name}
            folder = Path(importlib.import_module(package).__file__ or "").parent / "messages"
            fail(t_in(folder, key, difference=f"{max_difference(got, want):.3g}", **fields))
