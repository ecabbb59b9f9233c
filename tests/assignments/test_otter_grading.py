"""`otter run` with the autograder zip scores every part as `python -m autograder grade` does, old and new notebooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assignments.transformer_mt import build
from autograder.i18n import t as catalogue_text

REPO = build.REPO
EXAMPLES = REPO / "examples"
UNIT_PARTS = ("look_ahead_mask", "decoder_layer", "decoder", "transformer_forward", "masked_loss")
# case -> notebook; "solution" is the master with solutions (Otter's autograder notebook).
CASES = {
    "correct_original": EXAMPLES / "correct_original_format.ipynb",
    "buggy_original": EXAMPLES / "buggy_original_format.ipynb",
    "student_template": build.STUDENT_DIR / build.MASTER.name,
    "solution": None,
}
SLOW_CASES = {"template_original": EXAMPLES / "template_untouched.ipynb"}
TIMINGS: dict[str, float] = {}
# A loaded 2-core machine (CI beside other jobs) makes every step several times slower: the limits are
# set for that, not for a quiet machine. The fixture grades each case once per session.
SUBPROCESS_TIMEOUT_S = 1200
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(2400)]


def run_cli(notebooks: dict[str, Path], out: Path, env: dict[str, str]) -> dict[str, dict]:
    """Grade copies named after the cases with the project's CLI; returns case -> engine result JSON."""
    folder = out / "submissions"
    folder.mkdir(parents=True)
    for case, path in notebooks.items():
        shutil.copyfile(path, folder / f"{case}.ipynb")
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(folder),
            "--out",
            str(out / "reports"),
            "--quiet",
            "--jobs",
            "2",
        ],
        cwd=REPO,
        env=env,
        check=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    TIMINGS["cli (all cases, 2 jobs)"] = time.monotonic() - started
    return {case: json.loads((out / "reports" / f"{case}.json").read_text()) for case in notebooks}


def run_otter(case: str, notebook: Path, autograder_zip: Path, out: Path, env: dict[str, str]) -> dict:
    """`python -m otter run -a <zip> <notebook>` from the project root with no PYTHONPATH (as documented:
    `python -m` puts the root on the import path, where Otter finds the plugin module)."""
    target = out / case
    target.mkdir(parents=True)
    started = time.monotonic()
    env = {key: value for key, value in env.items() if key != "PYTHONPATH"}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "otter",
            "run",
            "-a",
            str(autograder_zip),
            "-o",
            str(target),
            "--no-logo",
            str(notebook),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    TIMINGS[f"otter run {case}"] = time.monotonic() - started
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return json.loads((target / "results.json").read_text())


def per_part(result: dict) -> dict[str, float]:
    """Engine result JSON -> unit part -> points."""
    return {p["part"]: p["points"] for p in result["parts"] if p["part"] in UNIT_PARTS}


def otter_per_part(document: dict, questions: dict[str, str]) -> dict[str, float]:
    """Otter results.json -> unit part -> score (tests are named by question)."""
    scores = {t["name"]: t["score"] for t in document["tests"]}
    return {part: scores[questions[part]] for part in UNIT_PARTS}


def grade_both(cases: dict[str, Path], autograder_zip: Path, out: Path, multi30k_dir: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MULTI30K_DIR": str(multi30k_dir)}
    cli = run_cli(cases, out / "cli", env)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            case: pool.submit(run_otter, case, path, autograder_zip, out / "otter", env) for case, path in cases.items()
        }
        otter = {case: future.result() for case, future in futures.items()}
    with zipfile.ZipFile(autograder_zip) as archive:
        plugin = json.loads(archive.read("otter_config.json"))["plugins"][0]
    questions = next(iter(plugin.values()))["questions"]
    print("\n" + "\n".join(f"{name}: {seconds:.1f} s" for name, seconds in TIMINGS.items()))
    return {case: (cli[case], otter[case], questions) for case in cases}


@pytest.fixture(scope="module")
def graded(
    autograder_zip: Path, solution_notebook: Path, multi30k_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    cases = {**{case: path for case, path in CASES.items() if path is not None}, "solution": solution_notebook}
    return grade_both(cases, autograder_zip, tmp_path_factory.mktemp("graded"), multi30k_dir)


@pytest.mark.parametrize("case", list(CASES))
def test_otter_run_matches_the_cli(graded: dict, case: str) -> None:
    cli, otter, questions = graded[case]
    assert otter_per_part(otter, questions) == per_part(cli)
    assert questions["training"] not in {t["name"] for t in otter["tests"]}, "skipped, so not shown as 0"


def test_expected_scores(graded: dict) -> None:
    full = {part: p for part, p in per_part(graded["correct_original"][0]).items()}
    assert per_part(graded["solution"][0]) == full and sum(full.values()) == 80
    assert set(per_part(graded["student_template"][0]).values()) == {0}
    buggy = per_part(graded["buggy_original"][0])
    assert buggy["look_ahead_mask"] < full["look_ahead_mask"] and buggy["masked_loss"] < full["masked_loss"]
    assert all(buggy[p] == full[p] for p in ("decoder_layer", "decoder", "transformer_forward"))


def test_untouched_student_notebook_gets_clear_messages(graded: dict) -> None:
    _, otter, questions = graded["student_template"]
    outputs = {t["name"]: t["output"] for t in otter["tests"]}
    for part in UNIT_PARTS:
        text = outputs[questions[part]]
        assert "All test cases passed" not in text, text
        assert any(
            hint in text for hint in ("raised", "stub", "None", "not defined", "예외가 발생", "정의되어 있지 않습니다")
        ), text
    assert catalogue_text("gradescope.not_graded_heading", language="ko") in otter["output"]  # grader.yml: ko


@pytest.mark.slow
def test_untouched_original_template_through_otter(autograder_zip: Path, multi30k_dir: Path, tmp_path: Path) -> None:
    results = grade_both(SLOW_CASES, autograder_zip, tmp_path, multi30k_dir)
    cli, otter, questions = results["template_original"]
    assert otter_per_part(otter, questions) == per_part(cli) == dict.fromkeys(UNIT_PARTS, 0)
