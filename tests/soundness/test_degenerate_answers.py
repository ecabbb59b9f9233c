"""Part 2's generated degenerate answers (degenerate_answers.py) earn at most their part's structural share.

The default suite checks the generator (size, every answer renders into the notebook it grades
and is the definition graded) and the rule on the golden scores' recorded verdicts; the `e2e`
test grades every generated answer through the engine (sandboxed workers, batch grading).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from degenerate_answers import CELLS, PARTS, answers, render_answers
from golden_scores import load_golden
from soundness_grading import corpus_config, grade_corpus, judge
from soundness_spec import load_cases

from autograder.credit import structural_share
from autograder.notebook import load_submission

ATTACKS = {
    "gen_mask_padding_mask",
    "gen_dl_running_mean_attack",
    "gen_dec_running_mean_attack",
    "gen_tf_one_hot_attack",
    "gen_loss_minus_mean_scored_logit",
}


def test_the_generator_answers_every_unit_part_several_ways() -> None:
    made = answers()
    assert len({a.id for a in made}) == len(made)
    per_part = Counter(a.part for a in made)
    assert set(per_part) == set(PARTS) and min(per_part.values()) >= 6, per_part
    assert {a.id for a in made} >= ATTACKS


def test_every_answer_is_the_definition_graded(tmp_path: Path) -> None:
    # The answer is appended to its part's cell: the loader keeps it, and it comes after the
    # notebook's own definition of the same name (the last definition is the one graded).
    for case in render_answers(tmp_path):
        notebook = json.loads(case.path.read_text(encoding="utf-8"))
        loaded = load_submission(case.path)
        assert not [p for p in loaded.problems if p.kind == "syntax"], (case.id, loaded.problems)
        cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
        patch = case.patches[0]
        assert case.tag is not None and patch.cell == CELLS[case.tag] and patch.append is not None
        assert any(cell.rstrip().endswith(patch.append.strip()) for cell in cells), case.id


def test_the_corpus_degenerates_keep_at_most_the_structural_share_in_the_golden_scores() -> None:
    # The golden file records the engine's points per check for the corpus's own degenerate answers.
    golden, parts = load_golden(), corpus_config().parts
    for case in load_cases():
        if case.kind != "degenerate":
            continue
        assert case.tag is not None
        part = parts[case.tag]
        got = golden[case.id]["parts"][case.tag]
        assert got <= structural_share(part) * part.points + 1e-9, (case.id, got)


@pytest.mark.e2e
@pytest.mark.timeout(3600)
def test_every_generated_answer_through_the_engine(tmp_path: Path) -> None:
    cases = render_answers(tmp_path)
    parts = corpus_config().parts
    run = grade_corpus(cases, out_dir=tmp_path / "reports")
    problems = {case.id: judge(case, run.results[case.id], run).problems for case in cases}
    assert {k: v for k, v in problems.items() if v} == {}
    for case in cases:  # DEGENERATE_CAPS is the documented structural share, nothing looser
        assert case.tag is not None
        got = next(p.points for p in run.results[case.id].parts if p.part == case.tag)
        assert got <= structural_share(parts[case.tag]) * parts[case.tag].points + 1e-9, case.id
