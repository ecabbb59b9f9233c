"""The generated autograder.py, run as Classroom50's runner runs it, on examples and hostile notebooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from classroom50_helpers import EXAMPLES, FIXTURES, ROOT, can_switch_uid, run_autograder, student_checkout

from autograder.integrations.classroom50.build import build
from autograder.integrations.classroom50.result_v1 import whole_points
from autograder.integrations.classroom50.schema import result_problems

pytestmark = pytest.mark.e2e  # each case loads torch and runs the public checks: seconds to a minute

CASES: dict[str, Path | None] = {
    "correct": EXAMPLES / "correct_original_format.ipynb",
    "buggy": EXAMPLES / "buggy_original_format.ipynb",
    "template": EXAMPLES / "template_untouched.ipynb",
    "unreadable": ROOT / "tests" / "fixtures" / "notebooks" / "not_a_notebook.ipynb",
    "crashes_on_load": FIXTURES / "crashes_on_load.ipynb",
    "exits_during_checks": FIXTURES / "exits_during_checks.ipynb",
    "forges_results": FIXTURES / "forges_results.ipynb",
    "hangs_without_alarm": FIXTURES / "hangs_without_alarm.ipynb",
    "no_notebook": None,
}
HANG_LIMIT_S = 60  # the parent's limit in the bundle used for the hanging notebook


class Run:
    """One autograder.py run: its process, result.json, release-body.md and $GITHUB_OUTPUT."""

    def __init__(self, checkout: Path, done: subprocess.CompletedProcess[str], output: Path) -> None:
        self.checkout, self.done = checkout, done
        self.result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
        self.body = (checkout / "release-body.md").read_text(encoding="utf-8")
        self.outputs = output.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    if not can_switch_uid():
        pytest.skip("autograder.py runs the notebook as a fresh uid: needs root or sudo without a password")
    base = tmp_path_factory.mktemp("classroom50")
    bundle, quick = base / "autograder", base / "autograder-quick"
    build("transformer_mt", bundle)
    shutil.copytree(bundle, quick)
    settings = json.loads((quick / "assignment.json").read_text(encoding="utf-8"))
    (quick / "assignment.json").write_text(json.dumps({**settings, "timeout_s": HANG_LIMIT_S}), encoding="utf-8")

    def one(name: str) -> Run:
        checkout = student_checkout(base / name, CASES[name])
        output = base / f"{name}.output"
        done = run_autograder(quick if name == "hangs_without_alarm" else bundle, checkout, output)
        assert done.returncode == 0, done.stderr[-3000:]
        return Run(checkout, done, output)

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(CASES, pool.map(one, CASES), strict=True))


@pytest.mark.parametrize("name", list(CASES))
def test_every_case_writes_a_valid_result_release_body_and_status(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    assert result_problems(run.result) == []
    assert [t["max-score"] for t in run.result["tests"]] == [10, 20, 20, 20, 10]
    assert run.result["owner"] == "alice" and run.result["submission"].startswith("submit/")
    assert run.body.startswith("### 공개 검사: ") and "비공개 검사" in run.body and "학습 (BLEU)" in run.body
    assert run.outputs.count("status=") == 1 and run.outputs.count("summary=") == 1


def test_correct_example_passes_every_public_part(runs: dict[str, Run]) -> None:
    run = runs["correct"]
    assert run.result["score"] == run.result["max-score"] == 80
    assert [t["test-name"] for t in run.result["tests"]][:2] == ["Look-ahead 마스크", "디코더 층 (DecoderLayer)"]
    assert "status=success\n" in run.outputs and "summary=80/80점 (모든 파트 통과)\n" in run.outputs


def test_buggy_example_fails_the_mask_with_the_tests_korean_hint(runs: dict[str, Run]) -> None:
    run = runs["buggy"]
    mask = run.result["tests"][0]
    assert not mask["passed"] and mask["score"] < 10 and "하삼각" in mask["message"]
    assert "status=failure\n" in run.outputs and "❌ 실패" in run.body


@pytest.mark.parametrize("name", ["correct", "buggy", "template"])
def test_scores_equal_the_cli_public_checks(runs: dict[str, Run], name: str, tmp_path: Path) -> None:
    """`python -m autograder public-checks` (the student workflow's runner) on the same notebook and tests."""
    run = runs[name]
    tests = run.checkout.parent / "autograder" / "tests"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{run.checkout}", "OMP_NUM_THREADS": "1"}
    env.pop("GITHUB_OUTPUT", None)
    command = [
        sys.executable,
        "-m",
        "autograder",
        "public-checks",
        "hw.ipynb",
        "--tests",
        str(tests),
        "--out",
        str(tmp_path),
    ]
    done = subprocess.run(command, cwd=run.checkout, capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    checks = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["checks"]
    expected = [whole_points(c["points"], c["possible"]) for c in checks]
    assert [(t["score"], t["max-score"]) for t in run.result["tests"]] == expected


def test_template_scores_zero_with_reasons(runs: dict[str, Run]) -> None:
    run = runs["template"]
    assert run.result["score"] == 0 and all(t["message"] for t in run.result["tests"])


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("crashes_on_load", "종료 코드 7"),
        ("exits_during_checks", "결과를 남기지 않음"),
        ("hangs_without_alarm", f"{HANG_LIMIT_S}초 제한 초과"),
        ("no_notebook", "노트북을 찾지 못했습니다"),
    ],
)
def test_a_notebook_that_kills_or_hangs_the_checks_still_gets_a_result(runs: dict[str, Run], name, reason) -> None:
    run = runs[name]
    assert run.result["score"] == 0 and not any(t["passed"] for t in run.result["tests"])
    assert all(reason in t["message"] for t in run.result["tests"]), run.result["tests"][0]["message"]
    assert "status=failure\n" in run.outputs


def test_unreadable_notebook_scores_zero(runs: dict[str, Run]) -> None:
    assert runs["unreadable"].result["score"] == 0


def test_forged_files_and_outputs_are_replaced(runs: dict[str, Run]) -> None:
    run = runs["forges_results"]
    assert run.result["score"] == 0 and run.result["max-score"] == 80
    assert "100/100" not in run.body
    assert "status=failure\n" in run.outputs and "status=success" not in run.outputs


def test_missing_runner_environment_is_an_infrastructure_failure(tmp_path: Path) -> None:
    bundle = tmp_path / "autograder"
    build("transformer_mt", bundle)
    checkout = student_checkout(tmp_path / "checkout", EXAMPLES / "correct_original_format.ipynb")
    done = run_autograder(bundle, checkout, tmp_path / "output", SUBMISSION_TAG="")
    assert done.returncode == 1 and "SUBMISSION_TAG" in done.stderr
    assert not (checkout / "result.json").exists()


def test_part_1_folder_gives_the_master_solution_full_public_marks(tmp_path: Path) -> None:
    """Part 1 (attention_encoder, seven questions, its training task among them) on its Otter master."""
    bundle = tmp_path / "autograder"
    build("attention_encoder", bundle)
    master = ROOT / "assignments" / "attention_encoder" / "attention_encoder.ipynb"
    checkout = student_checkout(tmp_path / "checkout", master)
    done = run_autograder(bundle, checkout, tmp_path / "output", ASSIGNMENT="attention-encoder")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert result_problems(result) == [] and result["score"] == result["max-score"] == 100
    assert [t["test-name"] for t in result["tests"]][2] == "위치 인코딩"


@pytest.mark.parametrize(
    ("notebook", "score"),
    [("assignments/tensor_basics/tensor_basics.ipynb", 100), ("student_template/tensor_basics/tensor_basics.ipynb", 0)],
)
def test_an_assignment_grown_from_the_scaffold_scores_its_solution_full_and_its_template_zero(
    tmp_path: Path, notebook: str, score: int
) -> None:
    """tensor_basics (docs/ASSIGNMENTS.md's example, written from `new-assignment`) on Classroom50's
    route: its Otter master (the solution) and its untouched student notebook."""
    if not can_switch_uid():
        pytest.skip("autograder.py runs the notebook as a fresh uid: needs root or sudo without a password")
    if not (ROOT / notebook).is_file():
        subprocess.run(
            [sys.executable, "-m", "assignments.build", "--assignment", "tensor_basics"], cwd=ROOT, check=True
        )
    bundle = tmp_path / "autograder"
    build("tensor_basics", bundle)
    checkout = student_checkout(tmp_path / "checkout", ROOT / notebook)
    done = run_autograder(bundle, checkout, tmp_path / "output", ASSIGNMENT="tensor-basics")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert result_problems(result) == [] and (result["score"], result["max-score"]) == (score, 100)
