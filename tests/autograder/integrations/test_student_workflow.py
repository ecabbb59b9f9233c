"""The student workflow's own steps, run as written in a scratch student repository."""

from __future__ import annotations

import shutil
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from workflow_tools import EXAMPLES, ROOT, STUDENT_WORKFLOW, decode_payload, load_workflow, read_outputs, run_step

from autograder.i18n import t
from autograder.integrations.public_checks import otter_test_files, outcome_payloads, run_public_checks
from autograder.reports.reporter_payload import reporter_env_name

TEMPLATE = ROOT / "student_template"
FIXTURE_TESTS = ROOT / "tests" / "fixtures" / "integrations" / "public_tests"
# The public tests written for the template (Otter exception format); fixtures otherwise.
PUBLIC_TESTS = TEMPLATE / "tests" if otter_test_files(TEMPLATE / "tests") else FIXTURE_TESTS


def student_repo(root: Path, notebook: str) -> Path:
    """A scratch student repository: the template's .github and tests, and one example notebook."""
    shutil.copytree(TEMPLATE / ".github", root / ".github")
    shutil.copytree(PUBLIC_TESTS, root / "tests")
    shutil.copyfile(EXAMPLES / f"{notebook}.ipynb", root / f"{notebook}.ipynb")
    return root


def reporter_totals(runners: str, environment: dict[str, str]) -> tuple[float, float, set[str]]:
    """What autograding-grading-reporter computes: env `<RUNNER>_RESULTS` per runner, base64 JSON;
    total = sum of test scores over runners with a max_score; job fails on status fail/error."""
    total = possible = 0.0
    statuses = set()
    for runner in runners.split(","):
        results = decode_payload(environment[f"{runner.strip().upper()}_RESULTS"])
        statuses.add(results["status"])
        if results["max_score"]:
            possible += results["max_score"]
            total += sum(test["score"] for test in results["tests"])
    return total, possible, statuses


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, object]]:
    """The `checks` step on the correct and the buggy example (in parallel)."""
    workflow = load_workflow(STUDENT_WORKFLOW)
    repos = {
        name: student_repo(tmp_path_factory.mktemp(name), name)
        for name in ["correct_original_format", "buggy_original_format"]
    }
    with ThreadPoolExecutor(2) as pool:
        runs = {name: pool.submit(run_step, workflow, "public-checks", "checks", repo) for name, repo in repos.items()}
        return {name: (repos[name], future.result()) for name, future in runs.items()}


def test_install_step_puts_the_cpu_torch_pin_first(tmp_path: Path) -> None:
    repo = student_repo(tmp_path / "repo", "correct_original_format")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "pip.log"
    stub = stubs / "python"
    stub.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n', encoding="utf-8")
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    done = run_step(
        load_workflow(STUDENT_WORKFLOW), "public-checks", "install", repo, extra_env={"PATH": f"{stubs}:/usr/bin:/bin"}
    )
    assert done.returncode == 0, done.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls[0] == "-m pip install --upgrade pip"
    assert calls[1] == "-m pip install torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu"
    assert calls[2].startswith("-m pip install -r ")
    rest = Path(calls[2].split("-r ", 1)[1]).read_text(encoding="utf-8")
    assert "torch==" not in rest and "otter-grader==" in rest and "nbformat==" in rest


def test_checks_step_writes_summary_outputs_and_results(checked) -> None:
    repo, done = checked["correct_original_format"]
    assert done.returncode == 0, done.stderr[-2000:]
    summary = (repo / ".runner" / "summary.md").read_text(encoding="utf-8")
    header = f"| {t('public.column.check', language='ko')} | {t('public.column.result', language='ko')} |"
    assert header in summary and t("public.result.passed", language="ko") in summary and "❌" not in summary
    outputs = read_outputs(repo / ".runner" / "output")
    assert outputs["runners"] == ",".join(p.stem for p in otter_test_files(repo / "tests"))
    assert outputs["score"] == outputs["max-score"]
    assert (repo / "public-checks" / "results.json").is_file()


def test_buggy_notebook_fails_the_mask_check_and_the_strict_step(checked) -> None:
    repo, done = checked["buggy_original_format"]
    assert done.returncode == 1  # --strict: the job goes red, the summary says why
    summary = (repo / ".runner" / "summary.md").read_text(encoding="utf-8")
    first_row = next(line for line in summary.splitlines() if line.startswith("| q1 "))
    assert "❌" in first_row
    # Otter's "Error at line 32 in test q1:" in the catalogue's words, as grader.check shows it (the
    # repository has no mtkit/: the bundle's own copy of mtkit/otter_checks.py words it).
    assert "Error at line" not in summary and "번째 줄에서 멈춤)" in summary
    assert not (repo / "mtkit").exists()
    assert float(read_outputs(repo / ".runner" / "output")["score"]) < float(
        read_outputs(repo / ".runner" / "output")["max-score"]
    )


@pytest.mark.parametrize("name", ["correct_original_format", "buggy_original_format"])
def test_reporter_job_receives_payloads_that_add_up_to_the_public_score(checked, name, tmp_path) -> None:
    repo, _ = checked[name]
    outputs = read_outputs(repo / ".runner" / "output")
    job = tmp_path / "reporter-job"
    job.mkdir()
    context = {"needs.public-checks.outputs.reporter-env": outputs["reporter-env"]}
    done = run_step(load_workflow(STUDENT_WORKFLOW), "classroom-reporter", "export", job, context)
    assert done.returncode == 0, done.stderr
    environment = read_outputs(job / ".runner" / "env")
    assert set(environment) == {reporter_env_name(r) for r in outputs["runners"].split(",")}
    total, possible, statuses = reporter_totals(outputs["runners"], environment)
    assert (total, possible) == (float(outputs["score"]), float(outputs["max-score"]))
    assert statuses == ({"pass"} if name.startswith("correct") else {"pass", "fail"})


def test_ok_format_and_exception_format_files_run_on_the_notebook_definitions() -> None:
    outcomes, problems = run_public_checks(EXAMPLES / "buggy_original_format.ipynb", FIXTURE_TESTS)
    scores = {o.name: (o.points, o.possible) for o in outcomes}
    assert scores == {"q1": (1, 2), "q2": (2, 2), "q3": (2, 2), "q4": (2, 2), "q5": (1, 2)}
    assert problems == []
    payloads = outcome_payloads(outcomes)
    assert sum(t["score"] for p in payloads.values() for t in p["tests"]) == 8
    assert payloads["q1"]["status"] == "fail" and payloads["q2"]["status"] == "pass"


def test_untouched_template_gets_zero_with_reasons(tmp_path: Path) -> None:
    outcomes, problems = run_public_checks(EXAMPLES / "template_untouched.ipynb", FIXTURE_TESTS)
    assert sum(o.points for o in outcomes) == 0
    assert any("cell 13" in p and "look_ahead_mask" in p for p in problems)
    assert all(case.message for o in outcomes for case in o.cases)


def test_cli_public_checks_subcommand_is_the_same_runner(monkeypatch) -> None:
    import autograder.integrations.public_checks as public_checks
    from autograder import cli

    calls = []

    def fake_main(argv: list[str], prog: str | None = None) -> int:
        calls.append((argv, prog))
        return 7

    monkeypatch.setattr(public_checks, "main", fake_main)
    assert cli.main(["public-checks", "hw.ipynb", "--tests", "tests"]) == 7
    assert calls == [(["hw.ipynb", "--tests", "tests"], "python -m autograder public-checks")]
