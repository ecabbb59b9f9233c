"""The "other people's style" corpus: Part 1 and Part 2 written after public Transformer code.

Fixtures live in tests/fixtures/styles/<assignment>/: per style a complete answer written in that
style while following the assignment (`<style>.py.txt`), and single deviations of public code kept
as a later cell (`<style>_<deviation>.py.txt`, the last definition wins as in a notebook). The
corpus is graded in process (trusted fixture code only) by the hidden checks, with the engine's
credit rule; `python -m tests.assignments.styles.style_corpus` prints the table.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from torch import nn

from autograder import credit
from autograder.assignment import load_assignment
from autograder.checks.support import CheckContext
from autograder.config import load_config
from autograder.i18n import use_language
from autograder.runner import Verdict, run_checks


def _tests_helper(name: str) -> Any:
    """A helper module at tests/ (pytest puts that folder on the path; run as a script, this file
    loads it by its path: tests/ on the path would hide the packages behind its same-named folders)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[2] / f"{name}.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


if TYPE_CHECKING:
    from namespace_student import NamespaceStudent
else:
    NamespaceStudent = _tests_helper("namespace_student").NamespaceStudent

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "styles"
PART1_BASE = REPO / "tests" / "assignments" / "attention_encoder" / "fixtures" / "correct.py.txt"
STYLES = ("annotated", "textbook", "compact")


@dataclass(frozen=True)
class StyleCase:
    """One corpus entry: an assignment, a style and the deviation it keeps (None: spec-following)."""

    assignment: str
    style: str
    deviation: str | None
    check: str | None  # the check whose message must name the deviation
    text: str | None = None  # a whole submission of another corpus (`style` then names its case)

    @property
    def id(self) -> str:
        return f"{self.assignment}:{self.style}" + (f"_{self.deviation}" if self.deviation else "")

    def source(self) -> str:
        """The whole submission: the given code, the style's answer, then the deviation's cell."""
        if self.text is not None:
            return self.text
        folder = FIXTURES / self.assignment
        base = PART1_BASE if self.assignment == "attention_encoder" else folder / "given.py.txt"
        files = [base, folder / f"{self.style}.py.txt"]
        if self.deviation:
            files.append(folder / f"{self.style}_{self.deviation}.py.txt")
        return "\n\n".join(path.read_text(encoding="utf-8") for path in files)


# assignment -> (style, deviation, the check whose message names it)
DEVIATIONS = {
    "attention_encoder": [
        ("annotated", "sqrt_d_scaling", "encoder_eval_output"),
        ("annotated", "final_norm", "encoder_eval_output"),
        ("annotated", "pre_norm", "encoder_layer_eval_output"),
        ("annotated", "learned_positions", "encoder_eval_output"),
        ("textbook", "sqrt_d_scaling", "encoder_eval_output"),
        ("compact", "pre_norm", "encoder_layer_eval_output"),
        ("compact", "heads_without_transpose", "mha_eval_output"),
        ("compact", "heads_never_transposed", "mha_eval_output"),
        ("annotated", "heads_interleaved", "mha_eval_output"),
        ("textbook", "heads_merge_order", "mha_eval_output"),
    ],
    "transformer_mt": [
        ("annotated", "log_softmax_output", "decoder_eval_output"),
        ("annotated", "sqrt_d_scaling", "decoder_eval_output"),
        ("annotated", "final_norm", "decoder_eval_output"),
        ("annotated", "pre_norm", "decoder_layer_eval_output"),
        ("textbook", "sqrt_d_scaling", "decoder_eval_output"),
        ("textbook", "swapped_masks", "decoder_layer_eval_output"),
        ("compact", "swapped_masks", "transformer_eval_output"),
        ("compact", "criterion_ignored", "loss_value"),
        ("annotated", "criterion_ignored", "loss_value"),
    ],
}


def cases() -> list[StyleCase]:
    """Every corpus entry: the spec-following answers, then the deviations."""
    following = [StyleCase(a, s, None, None) for a in DEVIATIONS for s in STYLES]
    return following + [StyleCase(a, s, d, c) for a, entries in DEVIATIONS.items() for s, d, c in entries]


def part1_soundness_cases() -> list[StyleCase]:
    """Part 1's soundness corpus (its mutants and alternatives: generated one-change variants of the
    correct answer, tests/assignments/attention_encoder/fixtures/cases.yaml) as cases of this corpus."""
    folder = PART1_BASE.parent
    listed = yaml.safe_load((folder / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    base = PART1_BASE.read_text(encoding="utf-8")
    return [
        StyleCase("attention_encoder", entry["id"], None, None, base + "\n\n" + (folder / entry["fixture"]).read_text())
        for entry in listed
        if entry["kind"] in ("mutant", "alternative")
    ]


def _criterion(spec: Any) -> Any:
    """A TorchObject spec as the worker builds it."""
    if hasattr(spec, "kwargs") and hasattr(spec, "name"):
        return getattr(nn, spec.name)(**spec.kwargs)
    return spec


class _Part2Student(NamespaceStudent):
    """Part 2's answerer over fixture code: criteria specs become criteria, as in the worker."""

    def convert(self, value: Any) -> Any:
        return _criterion(value)


def student(case: StyleCase) -> NamespaceStudent:
    """The in-process answerer for a case (fixture code is trusted: it is ours)."""
    assignment = load_assignment(case.assignment)
    if case.assignment == "attention_encoder":
        from assignments.attention_encoder.checks.helpers import helpers_namespace

        return NamespaceStudent(case.source(), assignment.grader_globals, helpers_namespace())
    from assignments.transformer_mt.checks.probes import probe_namespace

    return _Part2Student(case.source(), assignment.grader_globals, probe_namespace())


@functools.cache
def grade(case: StyleCase) -> tuple[dict[str, Verdict], dict[str, float]]:
    """The hidden checks' verdicts (as paid, worded in Korean) and the points per unit part (once per case)."""
    assignment = load_assignment(case.assignment)
    config = load_config(None, {"assignment.name": case.assignment})
    paid: dict[str, Verdict] = {}
    points: dict[str, float] = {}
    with use_language("ko", assignment.messages_dir):  # the credit rule's own messages in Korean too
        verdicts = run_checks(assignment.checks_dir, CheckContext(student=student(case), seed=0))
        for name, part in config.parts.items():
            if name == "training":
                continue
            credited = credit.credited(part, verdicts)
            paid.update(credited)
            points[name] = float(sum(p for check, p in part.checks.items() if (v := credited.get(check)) and v.passed))
    return paid, points


def full_marks(assignment: str) -> dict[str, float]:
    """The points of every unit part."""
    config = load_config(None, {"assignment.name": assignment})
    return {name: float(part.points) for name, part in config.parts.items() if name != "training"}


def table(show: Callable[[str], None] = print) -> None:
    """Print every case's points per part and the failing checks' messages."""
    for case in cases():
        paid, points = grade(case)
        show(f"{case.id}: {sum(points.values()):g}/{sum(full_marks(case.assignment).values()):g} {points}")
        for check, verdict in paid.items():
            if not verdict.passed:
                show(f"    {check}: {verdict.message or verdict.internal_error}")


if __name__ == "__main__":
    table()
