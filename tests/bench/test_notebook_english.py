"""bench/notebook_english.py: a buggy student notebook's run shows no English-only line (Otter's frame reworded)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from bench_scripts import load_bench

# English-only lines a student sees in the buggy notebook's run (grader.check cells included),
# measured after Otter's frame, the plugin's words and the notebooks' prints were put in Korean
# (before: Part 1 20, Part 2 24). The test fails when the number rises.
ALLOWED = {"attention_encoder": 0, "transformer_mt": 0}


def test_the_counter_sees_otters_frame_and_not_code(tmp_path: Path) -> None:
    bench = load_bench("notebook_english")
    (tmp_path / "q1.py").write_text("assert env['x'] == 1, 'x'\n", encoding="utf-8")
    cell = nbformat.v4.new_code_cell("grader.check('q1')")
    frame = "q1 results:\n    q1 - 1 result:\n        ❌ Test case failed\n        Error at line 1 in test q1:\n"
    code = "          assert env['x'] == 1, 'x'\n"
    cell.outputs = [
        nbformat.v4.new_output("execute_result", {"text/plain": frame + code + "        AssertionError: x\n"}),
        nbformat.v4.new_output("stream", text="장치(device): cpu\ntensor([[1, 0]], dtype=torch.int32)\nTrue\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    assert bench.english_lines(notebook, tmp_path) == [
        "q1 results:",
        "q1 - 1 result:",
        "❌ Test case failed",
        "Error at line 1 in test q1:",
        "AssertionError: x",
    ]


@pytest.mark.parametrize("assignment", sorted(ALLOWED))
def test_the_buggy_notebook_run_shows_no_more_english_only_lines(assignment: str, multi30k_dir: Path) -> None:
    lines, shown = load_bench("notebook_english").measure(assignment, {"MULTI30K_DIR": str(multi30k_dir)})
    # The run happened and its planted bug failed a public check, shown in the catalogue's words.
    failed = {"transformer_mt": "q1 결과: 2/10점", "attention_encoder": "q1 결과: 10/15점"}[assignment]
    assert failed in shown, shown
    assert "q2: 모든 검사를 통과했습니다(20/20점) ✅" in shown, shown
    assert len(lines) <= ALLOWED[assignment], lines


def test_otters_results_json_is_counted_as_gradescope_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    tests = [{"output": "q1 results:\n    mask: ❌ 실패"}, {"output": "q2: 모든 검사를 통과했습니다(20/20점) ✅"}]
    path.write_text(json.dumps({"output": "점수: 62/80", "tests": tests}), encoding="utf-8")
    assert load_bench("notebook_english").otter_results_english(path) == ["q1 results:"]
