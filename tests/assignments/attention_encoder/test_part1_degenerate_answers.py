"""Part 1's generated degenerate answers (ae_degenerate) earn at most their part's structural share.

In process (the trusted answerer over fixture code): two of the credit review's attacks, in the
default suite. Through the engine (sandboxed workers, batch grading): every answer, and the
training attack with training on, as `e2e`.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from ae_corpus import cases_of
from ae_degenerate import PARTS, Answer, answers, write_answers
from ae_inprocess import InProcessStudent
from ae_suite_runner import parts, points, run_suite

from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS
from autograder.config.sections import PartConfig
from autograder.credit import structural_share

SOUNDNESS = Path(__file__).resolve().parents[2] / "soundness"
if str(SOUNDNESS) not in sys.path:  # the engine-level corpus helpers (not a package)
    sys.path.insert(0, str(SOUNDNESS))

# The attacks of the credit review; two run in process in the default suite, all through the engine (e2e).
DEFAULT_SAMPLE = {"gen_mha_masked_mean_attack", "gen_encoder_layer_masked_mean_attack"}
ATTACKS = {
    "gen_attention_key_zero_only",
    "gen_mha_masked_mean_attack",
    "gen_pe_columns_0_1_attack",
    "gen_ffn_tanh_attack",
    "gen_encoder_layer_masked_mean_attack",
    "gen_encoder_masked_mean_attack",
}
ASSIGNMENT = "attention_encoder"


def _share(part: str) -> float:
    return structural_share(PartConfig.model_validate(parts()[part]))


def _full() -> dict[str, float]:
    return {name: float(parts()[name]["points"]) for name in PARTS}


def _check_in_process(answer: Answer) -> None:
    verdicts = run_suite(InProcessStudent(answer.submission(), GRADER_GLOBALS))
    got = points(verdicts)
    cap = _share(answer.part) * parts()[answer.part]["points"]
    assert got[answer.part] <= cap + 1e-9, (answer.id, got[answer.part], {c: m for c, m in verdicts.items() if not m})
    others = {name: got[name] for name in PARTS if name != answer.part}
    assert others == {name: _full()[name] for name in others}, answer.id


def test_the_generator_answers_every_unit_part_several_ways() -> None:
    made = answers()
    assert len({a.id for a in made}) == len(made)
    per_part = Counter(a.part for a in made)
    assert set(per_part) == set(PARTS) and min(per_part.values()) >= 7, per_part
    assert {a.id for a in made} >= ATTACKS
    for answer in made:
        compile(answer.submission(), answer.id, "exec")


@pytest.mark.parametrize("answer", [a for a in answers() if a.id in DEFAULT_SAMPLE], ids=lambda a: a.id)
def test_an_attack_of_the_review_keeps_at_most_the_structural_share(answer: Answer) -> None:
    _check_in_process(answer)


@pytest.mark.e2e
@pytest.mark.timeout(3600)
def test_every_generated_answer_through_the_engine(tmp_path: Path) -> None:
    from soundness_grading import degenerate_cap, grade_corpus, judge
    from soundness_spec import Case, Expectation

    written = write_answers(tmp_path)
    cases = [
        Case(a.id, "degenerate", a.part, a.description, (), {}, Expectation(cap=_share(a.part)), PARTS, written[a.id])
        for a in answers()
    ]
    run = grade_corpus(cases, out_dir=tmp_path / "reports", overrides={"assignment.name": ASSIGNMENT})
    problems = {case.id: judge(case, run.results[case.id], run).problems for case in cases}
    assert {k: v for k, v in problems.items() if v} == {}
    for case in cases:  # the cap is the documented structural share
        assert case.tag is not None
        assert degenerate_cap(case, _full()[case.tag]) == pytest.approx(_share(case.tag) * _full()[case.tag])


@pytest.mark.e2e
@pytest.mark.timeout(1200)
def test_the_training_attack_earns_nothing_through_the_engine(tmp_path: Path) -> None:
    from soundness_grading import grade_corpus, judge
    from soundness_spec import Case, Expectation

    (attack,) = [c for c in cases_of("cheat") if c.id == "cheat_encoder_torch_mha_in_training"]
    path = tmp_path / f"{attack.id}.py"
    path.write_text(attack.source(), encoding="utf-8")
    case = Case(
        attack.id,
        "cheat",
        "training",
        attack.description,
        (),
        {},
        Expectation(max_points=attack.max_points),
        PARTS,
        path,
    )
    run = grade_corpus(
        [case], out_dir=tmp_path / "reports", overrides={"assignment.name": ASSIGNMENT, "training.enabled": True}
    )
    result = run.results[case.id]
    assert judge(case, result, run).problems == []
    (training,) = [p for p in result.parts if p.part == "training"]
    assert training.points == 0 and not training.checks[0].skipped
    assert "Encoder" in training.checks[0].message  # names the parts that are not credited
