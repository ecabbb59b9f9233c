"""Checks of a graded nn.Module class (builds, parameters, transplanted outputs, dropout, gradients), any assignment."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal
from unittest import mock

import torch
from torch import Tensor, nn

from autograder.checks.support import (
    CheckContext,
    CheckFailed,
    NoMatch,
    Transplant,
    all_close,
    expect_tensor,
    fail,
    max_difference,
    require,
    transplant_matching,
)
from autograder.i18n import t
from autograder.sandbox.errors import WorkerFailure
from autograder.transplant import describe_mismatch, layout_sizes

Case = list[Any]  # positional arguments of the checked method
# (before, after, marker): two cases that differ in one respect; `marker` says where (an assignment
# turns it into the output positions that must not change, and into its message).
CasePair = tuple[Case, Case, Any]


@dataclass(kw_only=True)
class ModulePart:
    """How to build and feed one graded module class (an assignment adds its own fields)."""

    cls: str
    ctor_args: Callable[[float], list[Any]]  # drop_prob -> constructor arguments
    make_cases: Callable[[torch.Generator], list[Case]]
    output_shape: Callable[[Case], tuple[int, ...]]
    method: str = "forward"
    substitute: dict[str, str] = field(default_factory=dict)
    set_globals: dict[str, Any] = field(default_factory=dict)
    drop_prob: float = 0.1
    # Submodule classes that take drop_prob themselves; at drop_prob=1.0 in train mode their output
    # may not depend on their input. They are fed a tensor shaped like the part's first input.
    dropout_submodules: tuple[str, ...] = ()
    # Common deviations of public Transformer code: message name -> a change that makes the
    # reference module compute that deviation (hooks, a replaced forward, an extra layer). When no
    # transplant reproduces the reference, the first deviation one reproduces names the cause.
    deviations: dict[str, Callable[[nn.Module], None]] = field(default_factory=dict)
    layout_key: str = ""  # the catalogue key of the documented layout, ending the structural messages
    # (before, after, kept positions): cases that differ only where a padding mask hides keys; the
    # outputs at the kept positions (dim 1) must not change (the `padding` check).
    padding_pair: Callable[[torch.Generator], CasePair] | None = None
    # (before, after, k): cases equal up to position k; the outputs there must not change (`causal`).
    causal_pair: Callable[[torch.Generator], CasePair] | None = None
    # (before, after, j): cases equal except at a visible position j; a module doing its work changes
    # an output at another position (a later one when the part is causal). Properties about what a
    # position sees are credited only then (`require_context_use`).
    context_change: Callable[[torch.Generator], CasePair] | None = None


@dataclass(frozen=True)
class ModuleTexts:
    """The student-facing messages of the module checks: `<prefix>.<name>` of an assignment's catalogue.

    Every message has the same fields for every assignment (a catalogue may leave a field unused);
    the flags say where assignments word them differently.
    """

    translate: Callable[..., str]  # the assignment's `t` (key, then the message's fields)
    prefix: str  # the keys' common start, e.g. "checks.module"
    outputs_floating: bool | None = None  # whether the property checks require a float output
    method_in_names: bool = False  # the build and output messages name `Class.method` rather than `Class`
    layout_message: bool = False  # `<prefix>.layout` says why no weights fit (else the transplant's mismatch)

    def say(self, key: str, /, **fields: Any) -> str:
        """The message `<prefix>.<key>` with its fields (positional-only: a field may be called `name`)."""
        return self.translate(f"{self.prefix}.{key}", **fields)

    def output_name(self, cls: str) -> str:
        """How a module's output is called in messages (cls: a class, or `Class.submodule`)."""
        return self.say("output_name", cls=cls)

    def named(self, part: ModulePart) -> str:
        """The part as the build and eval-output messages name it."""
        return f"{part.cls}.{part.method}" if self.method_in_names else part.cls

    def hint(self, part: ModulePart) -> str:
        """The part's documented layout, ending the structural messages."""
        return self.translate(part.layout_key)


class ModuleChecks:
    """The checks of module parts, with an assignment's reference classes, probes and messages.

    A check builds the student's module once per run (cached in the context), compares it with
    the reference module under transplanted weights, and words every failure with `texts`.
    """

    def __init__(
        self,
        texts: ModuleTexts,
        reference: ModuleType,
        probes: Callable[[], dict[str, Any]],
        optional_probes: bool = False,
    ) -> None:
        """Configure the checks for one assignment.

        Args:
            texts: the assignment's messages.
            reference: the module of the reference classes, whose globals they look each other up in.
            probes: a fresh namespace of the probe classes (the assignment's probe source, run again).
            optional_probes: whether a student's class may do a substituted class's work itself, so
                that the reference is also tried without that probe (`probe_choices`); False: the
                reference always uses every substitute.
        """
        self.texts = texts
        self.reference = reference
        self.probes = probes
        self.optional_probes = optional_probes

    # -- building and running ----------------------------------------------------------------------
    def student_module(self, ctx: CheckContext, part: ModulePart, drop_prob: float) -> int:
        """Build (once per run) the student's module for a dropout probability; returns its handle."""
        key = f"{part.cls}:{drop_prob}"
        if key not in ctx.cache:
            require(ctx, part.cls)
            handle = ctx.student.new(
                part.cls,
                part.ctor_args(drop_prob),
                seed=ctx.seed,
                set_globals=part.set_globals or None,
                substitute=part.substitute or None,
            )
            ctx.cache[key] = handle
            # One forward before anything is inspected: lazy modules (nn.LazyLinear) get their
            # parameters' shapes only then. An exception is left to the checks to report.
            try:
                self.run(ctx, part, handle, self.cases(ctx, part)[0], "eval")
            except Exception as error:
                if isinstance(error, WorkerFailure):  # hung or died: the same timeout would be paid again
                    raise
        return int(ctx.cache[key])

    def probe_choices(self, part: ModulePart) -> list[dict[str, str]]:
        """The probe sets the reference may be built with: every substitute, then fewer (`optional_probes`).

        What is called decides, not what is built: a module that keeps the template's
        `self.attention` but computes attention inline never calls that probe, and its outputs are
        the reference's without it; a module that never builds the class is the same case. Each set
        is a reference of its own that the outputs must reproduce, so trying them admits nothing
        incorrect.
        """
        if not self.optional_probes:
            return [part.substitute]
        names, sizes = list(part.substitute), range(len(part.substitute), -1, -1)
        return [
            {n: part.substitute[n] for n in chosen} for size in sizes for chosen in itertools.combinations(names, size)
        ]

    @contextlib.contextmanager
    def reference_with_probes(self, substitute: Mapping[str, str]) -> Iterator[None]:
        """Let probes stand in for reference classes (the reference module's globals are rebound) for the duration.

        Args:
            substitute: reference class name -> probe name, e.g. {"DecoderLayer": "ProbeDecoderLayer"}.
        """
        probes = self.probes()
        values = {name: probes[probe] for name, probe in substitute.items()}
        with mock.patch.multiple(self.reference, **values) if values else contextlib.nullcontext():
            yield

    def reference_module(self, part: ModulePart, drop_prob: float, seed: int, substitute: dict[str, str]) -> nn.Module:
        """The reference module of a part, with the same probes standing in as for the student.

        Parameters initialised to a constant (LayerNorm's ones and zeros) get seeded random values,
        so that the transplant cannot pair same-shaped submodules wrongly and still reproduce the
        outputs (which would then make correct gradients look wrong, and hide a reused norm).
        """
        with self.reference_with_probes(substitute):
            torch.manual_seed(seed)
            module: nn.Module = getattr(self.reference, part.cls)(*part.ctor_args(drop_prob))
        _vary_constants(module, seed + 1009)
        return module

    def run(
        self,
        ctx: CheckContext,
        part: ModulePart,
        handle: int,
        case: Case,
        mode: Literal["eval", "train"],
        seed: int = 0,
    ) -> Any:
        """Run the student's module on one case."""
        return ctx.student.run(handle, part.method, case, mode=mode, seed=seed, set_globals=part.set_globals or None)

    def reference_run(self, module: nn.Module, part: ModulePart, case: Case, mode: str, seed: int = 0) -> Tensor:
        """Run the reference module on one case (no gradients)."""
        module.train(mode == "train")
        torch.manual_seed(seed)
        with torch.no_grad():
            output: Tensor = _method(module, part)(*case)
        return output

    def cases(self, ctx: CheckContext, part: ModulePart) -> list[Case]:
        """The part's seeded cases."""
        return part.make_cases(torch.Generator().manual_seed(ctx.seed + 7))

    def output(self, part: ModulePart, value: Any) -> Tensor:
        """The student's output, failing unless it is a tensor (float where the assignment says so)."""
        return expect_tensor(value, self.texts.output_name(part.cls), floating=self.texts.outputs_floating)

    # -- checks --------------------------------------------------------------------------------------
    def check_builds(self, ctx: CheckContext, part: ModulePart) -> None:
        """It constructs with the documented arguments and returns a float tensor of the right shape."""
        handle = self.student_module(ctx, part, part.drop_prob)
        for case in self.cases(ctx, part):
            expect_tensor(
                self.run(ctx, part, handle, case, "eval"),
                self.texts.output_name(self.texts.named(part)),
                shape=part.output_shape(case),
                floating=True,
            )

    def check_parameters(self, ctx: CheckContext, part: ModulePart) -> None:
        """Same number of parameter tensors, and the same shapes, as the documented layout."""
        handle = self.student_module(ctx, part, part.drop_prob)
        layouts = [
            sorted(tuple(p.shape) for p in self.reference_module(part, part.drop_prob, 0, used).parameters())
            for used in self.probe_choices(part)
        ]
        actual = sorted(tuple(shape) for _, shape in ctx.student.params(handle))
        if actual not in layouts:
            sizes = layout_sizes(actual, layouts[0])
            fail(self.texts.say("parameters", cls=part.cls, hint=self.texts.hint(part), **sizes))

    def transplant(self, ctx: CheckContext, part: ModulePart, drop_prob: float | None = None) -> Transplant:
        """Load reference weights into the student's module under the mapping that reproduces it."""
        drop_prob = part.drop_prob if drop_prob is None else drop_prob
        key = f"transplant:{part.cls}:{drop_prob}"
        if key in ctx.cache:
            cached: Transplant | str = ctx.cache[key]
            if isinstance(cached, str):  # the reason no mapping reproduces the reference
                fail(cached)
            return cached
        handle = self.student_module(ctx, part, drop_prob)
        diffs: list[float] = []  # the largest difference of each failed try, the first choice's first
        refs = [self.reference_module(part, drop_prob, ctx.seed, used) for used in self.probe_choices(part)]
        found = self._transplant_any(ctx, part, handle, refs, diffs)
        if isinstance(found, Transplant):
            ctx.cache[key] = found
            return found
        hint, cls = self.texts.hint(part), self.texts.named(part)
        if diffs:
            reason = self.texts.say("eval_output", cls=cls, difference=f"{diffs[0]:.3g}", hint=hint)
        elif self.texts.layout_message:
            reason = self.texts.say("layout", cls=part.cls, hint=hint)
        else:  # no reference had the student's parameter shapes
            ref_params = [(n, list(p.shape)) for n, p in refs[0].named_parameters()]
            mismatch = describe_mismatch(ref_params, ctx.student.params(handle))
            reason = t("checks.layout_mismatch", what=part.cls, mismatch=mismatch)
        for name, change in part.deviations.items():
            refs = [self.reference_module(part, drop_prob, ctx.seed, used) for used in self.probe_choices(part)]
            for ref in refs:
                change(ref)
                _vary_constants(ref, ctx.seed + 1013)
            if isinstance(self._transplant_any(ctx, part, handle, refs, []), Transplant):
                reason = ctx.cache[f"deviation:{part.cls}"] = self.texts.say(f"deviation.{name}", cls=part.cls)
                break
        ctx.cache[key] = reason
        fail(reason)

    def _transplant_any(
        self, ctx: CheckContext, part: ModulePart, handle: int, refs: list[nn.Module], diffs: list[float]
    ) -> Transplant | None:
        """The first transplant, from any of the reference modules, under which the student's module
        reproduces that module's outputs (eval mode, every case); None if there is none.

        A reference whose parameter shapes differ from the student's is skipped.
        """
        student_layout = sorted(tuple(shape) for _, shape in ctx.student.params(handle))
        cases = self.cases(ctx, part)
        for ref in refs:
            if sorted(tuple(p.shape) for p in ref.parameters()) != student_layout:
                continue
            expected = [self.reference_run(ref, part, case, "eval") for case in cases]

            def reproduces(_mapping: dict[str, str], expected: list[Tensor] = expected) -> bool:
                for case, want in zip(cases, expected, strict=True):
                    got = expect_tensor(
                        self.run(ctx, part, handle, case, "eval"),
                        self.texts.output_name(part.cls),
                        shape=tuple(want.shape),
                        floating=True,
                    )
                    if not all_close(got, want):
                        diffs.append(max_difference(got, want))
                        return False
                return True

            with contextlib.suppress(NoMatch):
                return transplant_matching(ctx.student, handle, ref, reproduces, part.cls)
        return None

    def deviation_shown(self, ctx: CheckContext, part: ModulePart) -> str | None:
        """The message naming the deviation of public code the outputs reproduce (`deviations`), if any:
        a property check that fails because of it says so rather than guess another cause."""
        with contextlib.suppress(CheckFailed):
            self.transplant(ctx, part)
        return ctx.cache.get(f"deviation:{part.cls}")

    def check_eval_output(self, ctx: CheckContext, part: ModulePart) -> None:
        """Eval-mode outputs equal the reference's on every case under transplanted weights."""
        self.transplant(ctx, part)

    def require_context_use(self, ctx: CheckContext, part: ModulePart) -> None:
        """Fail unless changing one position changes an output at another one (eval mode).

        A module that returns its input, or works position by position, has the properties about
        what a position may see for free; they are credited only once positions do look at each
        other (`part.context_change`; a causal part's later positions). Cached per run (the
        property checks share it); a part without `context_change` is not asked.
        """
        key = f"context-use:{part.cls}"
        if part.context_change is None:
            return
        if key not in ctx.cache:
            handle = self.student_module(ctx, part, part.drop_prob)
            before, after, j = part.context_change(torch.Generator().manual_seed(ctx.seed + 31))
            outputs = [self.output(part, self.run(ctx, part, handle, case, "eval")) for case in (before, after)]
            length = outputs[0].shape[1] if outputs[0].dim() >= 2 else 0
            first = j + 1 if part.causal_pair is not None else 0
            positions = [i for i in range(first, length) if i != j]
            used_context = (
                outputs[0].shape == outputs[1].shape
                and bool(positions)
                and not all_close(outputs[0][:, positions], outputs[1][:, positions])
            )
            ctx.cache[key] = None if used_context else self.texts.say("no_context", cls=part.cls, j=j, later=j + 1)
        if ctx.cache[key]:
            fail(ctx.cache[key])

    def check_padding(self, ctx: CheckContext, part: ModulePart) -> None:
        """Changing what sits at masked (padding) key positions never changes the outputs at the
        other positions, and outputs do depend on other visible positions (not vacuous)."""
        if self.changed_marker(ctx, part, part.padding_pair, "padding", lambda kept: kept) is not None:
            fail(self.deviation_shown(ctx, part) or self.texts.say("padding_leaks", cls=part.cls))

    def check_causal(self, ctx: CheckContext, part: ModulePart) -> None:
        """Changing inputs after position k never changes outputs at positions <= k (eval mode),
        and later outputs do depend on earlier inputs (so the property is not vacuous)."""
        k = self.changed_marker(ctx, part, part.causal_pair, "causal", lambda k: list(range(k + 1)))
        if k is not None:
            fail(self.texts.say("sees_future", cls=part.cls, k=k))

    def changed_marker(
        self,
        ctx: CheckContext,
        part: ModulePart,
        pair: Callable[[torch.Generator], CasePair] | None,
        cases: str,
        kept: Callable[[Any], list[int]],
    ) -> Any:
        """Whether changing what a position may not see changes the outputs there (eval mode, two
        pairs); when none does, fail unless outputs depend on other positions (`require_context_use`).

        Args:
            ctx: the grading context.
            part: the module part.
            pair: seeded generator -> cases that differ only where the kept positions may not look.
            cases: what the pairs are called when the part has none (a configuration error).
            kept: marker -> output positions (dim 1) that must stay the same.

        Returns:
            The marker of the first pair whose kept outputs changed; None when they never did.
        """
        if pair is None:
            raise RuntimeError(f"{part.cls} has no {cases} cases")
        handle = self.student_module(ctx, part, part.drop_prob)
        gen = torch.Generator().manual_seed(ctx.seed + 11)
        for _ in range(2):
            before, after, marker = pair(gen)
            out_before, out_after = (self.output(part, self.run(ctx, part, handle, c, "eval")) for c in (before, after))
            positions = kept(marker)
            if out_before.shape != out_after.shape or not all_close(out_before[:, positions], out_after[:, positions]):
                return marker
        self.require_context_use(ctx, part)
        return None

    def check_dropout(self, ctx: CheckContext, part: ModulePart) -> None:
        """Dropout acts in train mode only, with drop_prob, at the documented places."""
        handle = self.student_module(ctx, part, 0.5)
        case = self.cases(ctx, part)[0]
        eval_out = self.output(part, self.run(ctx, part, handle, case, "eval"))
        train_out = self.output(part, self.run(ctx, part, handle, case, "train", seed=1))
        if all_close(eval_out, train_out):
            fail(self.texts.say("dropout_never", cls=part.cls))
        moved = self.transplant(ctx, part, drop_prob=1.0)
        for case in self.cases(ctx, part):
            want = self.reference_run(moved.reference, part, case, "train")
            got = self.output(part, self.run(ctx, part, moved.handle, case, "train"))
            if not all_close(got, want):
                fail(self.texts.say("dropout_place", cls=part.cls))
        self._check_submodule_dropout(ctx, part, moved.handle)

    def _check_submodule_dropout(self, ctx: CheckContext, part: ModulePart, handle: int) -> None:
        """Submodules that take drop_prob must drop everything at drop_prob=1.0 in train mode:
        their output may then not depend on their input."""
        if not part.dropout_submodules:
            return
        shape = tuple(self.cases(ctx, part)[0][0].shape)
        gen = torch.Generator().manual_seed(ctx.seed + 19)
        inputs = [torch.randn(shape, generator=gen) for _ in range(2)]
        for name, class_name in ctx.student.modules(handle):
            if not name or class_name not in part.dropout_submodules:
                continue
            outputs = [
                expect_tensor(
                    ctx.student.run(handle, f"{name}.forward", [x], mode="train", set_globals=part.set_globals or None),
                    self.texts.output_name(f"{part.cls}.{name}"),
                )
                for x in inputs
            ]
            if not all_close(*outputs):
                fail(self.texts.say("submodule_dropout", cls=part.cls, name=name, class_name=class_name))

    def check_gradients(self, ctx: CheckContext, part: ModulePart) -> None:
        """Gradients reach every parameter and equal the reference's (eval mode, same weights)."""
        moved = self.transplant(ctx, part)
        case = self.cases(ctx, part)[-1]
        ref = moved.reference
        ref.eval()
        ref.zero_grad(set_to_none=True)
        want_out = _method(ref, part)(*case)
        upstream = torch.randn(want_out.shape, generator=torch.Generator().manual_seed(ctx.seed + 13))
        want_out.backward(upstream)
        grads = ctx.student.run(
            moved.handle, part.method, case, mode="eval", seed=0, set_globals=part.set_globals or None, grad=upstream
        )["param_grads"]
        for ref_name, param in ref.named_parameters():
            student_name = moved.mapping[ref_name]
            got = grads.get(student_name)
            if got is None or not bool(got.abs().sum() > 0):
                fail(self.texts.say("no_gradient", cls=part.cls, name=student_name))
            want = param.grad
            if want is None:  # every reference parameter takes part in its output
                raise RuntimeError(f"reference parameter {ref_name} got no gradient")
            if not all_close(got, want):
                fail(self.texts.say("gradient", name=student_name, difference=f"{max_difference(got, want):.3g}"))


def _vary_constants(module: nn.Module, seed: int) -> None:
    """Add seeded noise to every parameter initialised to one constant (LayerNorm's ones and zeros)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in module.parameters():
            flat = param.reshape(-1)
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                param.add_(torch.randn(param.shape, generator=gen) * 0.2)


def _method(module: nn.Module, part: ModulePart) -> Callable[..., Any]:
    """The part's method of a reference module; `forward` through __call__, so that hooks run."""
    return module if part.method == "forward" else getattr(module, part.method)
