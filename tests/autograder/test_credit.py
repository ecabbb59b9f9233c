"""The credit rule: properties are paid behind a part's gate; parts may require others' gates."""

from __future__ import annotations

import pytest

from autograder import credit
from autograder.assignment_folder import available_assignments
from autograder.config import ConfigError, load_config
from autograder.config.sections import PartConfig
from autograder.i18n import use_language
from autograder.runner import Verdict

PART = PartConfig(
    title="Layer",
    points=10,
    checks={"builds": 1, "eval_output": 5, "causal": 2, "gradients": 2},
    gate=["eval_output"],
    structure=["builds"],
)


def _verdicts(**passed: bool) -> dict[str, Verdict]:
    return {check: Verdict(ok, "" if ok else f"{check} failed") for check, ok in passed.items()}


def test_a_property_is_paid_only_behind_a_passed_gate() -> None:
    held = _verdicts(builds=True, eval_output=False, causal=True, gradients=False)
    with use_language("en"):
        paid = credit.credited(PART, held)
    assert credit.withheld(PART, held) == ["causal"]
    assert [c for c, v in paid.items() if v.passed] == ["builds"]
    assert "eval_output" in paid["causal"].message  # the withheld property names the failed gate
    assert paid["gradients"].message == "gradients failed"  # a failure keeps its own explanation


def test_everything_that_passed_is_paid_when_the_gate_passed() -> None:
    held = _verdicts(builds=True, eval_output=True, causal=True, gradients=False)
    assert credit.withheld(PART, held) == []
    assert credit.credited(PART, held) == held


def test_a_gate_without_a_verdict_counts_as_failed() -> None:
    held = _verdicts(builds=True, causal=True)
    assert not credit.gate_passed(PART, held)
    assert credit.withheld(PART, held) == ["causal"]


def test_a_part_without_a_gate_pays_every_check_on_its_own() -> None:
    plain = PartConfig(points=3, checks={"a": 1, "b": 2})
    held = _verdicts(a=False, b=True)
    assert credit.credited(plain, held) == held
    assert credit.structural_share(plain) == 1.0


def test_the_structural_share_is_the_structure_checks_points() -> None:
    assert credit.structural_share(PART) == pytest.approx(0.1)


def test_a_part_that_requires_others_waits_for_their_gates() -> None:
    training = PartConfig(points=10, checks={"training_accuracy": 10}, requires_parts=["layer"])
    parts = {"layer": PART, "training": training}
    good = _verdicts(builds=True, eval_output=True, causal=True, gradients=True)
    bad = _verdicts(builds=True, eval_output=False, causal=True, gradients=True)
    assert credit.unmet_requirements("training", parts, ["layer", "training"], good) == []
    assert credit.unmet_requirements("training", parts, ["layer", "training"], bad) == ["layer"]
    # not graded in this run: nothing shows the required part works, so the training part waits
    assert credit.unmet_requirements("training", parts, ["training"], good) == ["layer"]
    with use_language("en"):
        verdict = credit.requirement_verdict(["layer"], parts)
    assert not verdict.passed and "Layer" in verdict.message


def test_every_part_of_both_assignments_has_a_gate_and_a_small_structural_share() -> None:
    # docs/SOUNDNESS.md: at most 10% of every unit part is paid to an answer doing no work
    for name in available_assignments():
        parts = load_config(overrides={"assignment.name": name}).parts
        for part_name, part in parts.items():
            if part_name == "training":
                continue
            assert part.gate, (name, part_name)
            assert credit.structural_share(part) <= 0.10 + 1e-9, (name, part_name, part.structure)


def test_part1_training_requires_every_part_its_encoder_is_built_from() -> None:
    parts = load_config(overrides={"assignment.name": "attention_encoder"}).parts
    assert sorted(parts["training"].requires_parts) == sorted(p for p in parts if p != "training")


@pytest.mark.parametrize(
    ("change", "expected"),
    [({"gate": ["nope"]}, "not one of the part.s checks"), ({"structure": ["a"], "gate": ["a"]}, "also a gate check")],
)
def test_credit_lists_must_name_the_parts_own_checks(change: dict[str, list[str]], expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        PartConfig.model_validate({"points": 3, "checks": {"a": 1, "b": 2}, **change})


def test_requires_parts_must_name_another_part(tmp_path) -> None:
    config_file = tmp_path / "grader.yml"
    config_file.write_text(
        "parts:\n  a:\n    points: 1\n    checks: {x: 1}\n    requires_parts: [missing]\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="requires_parts"):
        load_config(config_file)


def test_the_engine_pays_by_the_rule() -> None:
    from autograder.engine import _score

    config = load_config()
    verdicts = {check: Verdict(True) for part in config.parts.values() for check in part.checks}
    verdicts["decoder_layer_eval_output"] = Verdict(False, "differs")
    with use_language("en"):
        scored = {part.part: part for part in _score(config, list(config.parts), verdicts, {})}
    layer = scored["decoder_layer"]
    assert layer.points == sum(config.parts["decoder_layer"].checks[c] for c in config.parts["decoder_layer"].structure)
    assert any("decoder_layer_eval_output" in message for message in layer.messages)
    assert scored["decoder"].points == config.parts["decoder"].points  # other parts keep their points
