"""The credit rule: which passed checks are paid (gated properties, parts that require others).

A part's `gate` checks compare the answer's outputs with the reference's on inputs that exercise
the part. Its other checks, except `structure`, are generic properties (masking, causality,
dropout, gradients, the parameter layout) that cheap functions of the right shape can satisfy:
they are paid only when every gate check passed. A part with `requires_parts` (the training
part) is graded only when every required part was graded and its gate checks passed. A part whose
checks made one of its `forbidden_calls` (recorded in the worker) earns nothing. The rule
and each part's structural share are stated in docs/SOUNDNESS.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from autograder.config.sections import PartConfig
from autograder.i18n import part_title, t
from autograder.runner import Verdict

WITHHELD_EXTRA = "credit_withheld"  # result.extras key: checks that held but were not paid


def gate_passed(part: PartConfig, verdicts: Mapping[str, Verdict]) -> bool:
    """Whether every gate check of a part passed (True for a part without a gate).

    Args:
        part: the part's configuration.
        verdicts: check id -> verdict of this grading (a check without one failed).

    Returns:
        True when the part's gated checks may be paid.
    """
    gate = all((verdict := verdicts.get(check)) is not None and verdict.passed for check in part.gate)
    return gate and not refused_calls(part, verdicts)


def refused_calls(part: PartConfig, verdicts: Mapping[str, Verdict]) -> list[str]:
    """The part's `forbidden_calls` that the worker recorded while the part's checks ran.

    Args:
        part: the part's configuration.
        verdicts: check id -> verdict.

    Returns:
        Those names, in the declared order (only declared names: what the worker sends is not trusted).
    """
    recorded = {name for check in part.checks if (v := verdicts.get(check)) is not None for name in v.library_calls}
    return [name for name in part.forbidden_calls if name in recorded]


def is_gated(part: PartConfig, check: str) -> bool:
    """Whether a check of the part is paid only behind the part's gate.

    Args:
        part: the part's configuration.
        check: one of its check ids.

    Returns:
        True for a property check of a part that has a gate.
    """
    return bool(part.gate) and check not in part.gate and check not in part.structure


def withheld(part: PartConfig, verdicts: Mapping[str, Verdict]) -> list[str]:
    """The part's checks that passed but are not paid, because its gate failed.

    Args:
        part: the part's configuration.
        verdicts: check id -> verdict.

    Returns:
        Their ids, in the part's order (empty when the gate passed).
    """
    if gate_passed(part, verdicts):
        return []
    return [c for c in part.checks if is_gated(part, c) and (v := verdicts.get(c)) is not None and v.passed]


def credited(part: PartConfig, verdicts: Mapping[str, Verdict]) -> dict[str, Verdict]:
    """The part's verdicts as paid: a passed property behind a failed gate becomes a failure that
    says why it earns nothing (the property's own result stays visible in the message).

    Args:
        part: the part's configuration.
        verdicts: check id -> verdict (all checks of the grading; only the part's are changed).

    Returns:
        A new mapping with the part's withheld checks failed.
    """
    refused = refused_calls(part, verdicts)
    if refused:  # not the student's own code: no check of the part is paid, its structure included
        message = t("credit.library_calls", calls=", ".join(refused))
        return {**verdicts, **{check: Verdict(False, message) for check in part.checks}}
    held = withheld(part, verdicts)
    if not held:
        return dict(verdicts)
    failed_gate = ", ".join(c for c in part.gate if not ((v := verdicts.get(c)) is not None and v.passed))
    message = t("credit.withheld", gate=failed_gate)
    return {**verdicts, **{check: Verdict(False, message) for check in held}}


def unmet_requirements(
    name: str, parts: Mapping[str, PartConfig], graded: Iterable[str], verdicts: Mapping[str, Verdict]
) -> list[str]:
    """The parts a part requires that were not graded in this run or whose gate failed.

    Args:
        name: the requiring part.
        parts: the configuration's parts table.
        graded: the parts graded in this run (selected and enabled).
        verdicts: the verdicts so far (the required parts are unit parts, graded first).

    Returns:
        Their names, in the order `requires_parts` lists them.
    """
    graded = set(graded)
    return [
        required
        for required in parts[name].requires_parts
        if required not in graded or not gate_passed(parts[required], verdicts)
    ]


def requirement_verdict(missing: list[str], parts: Mapping[str, PartConfig]) -> Verdict:
    """The verdict given to every check of a part whose required parts are not credited.

    Args:
        missing: from `unmet_requirements` (not empty).
        parts: the configuration's parts table (for the titles).

    Returns:
        A failed verdict naming the parts.
    """
    titles = ", ".join(part_title(p, parts[p].title or p) for p in missing)
    return Verdict(False, t("credit.requires_parts", parts=titles))


def structural_share(part: PartConfig) -> float:
    """The share of a part's points that an answer doing no work may keep: its structure checks
    (with a gate), else every check (a part without a gate bounds nothing).

    Args:
        part: the part's configuration.

    Returns:
        A number in [0, 1].
    """
    if not part.gate or part.points <= 0:
        return 1.0
    return sum(part.checks[c] for c in part.structure) / part.points
