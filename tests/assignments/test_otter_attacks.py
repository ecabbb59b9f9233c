"""Uploads that attack the Otter paths score what the CLI gives and run nothing outside the sandbox.

Each upload (tests/assignments/otter_uploads.py) is graded once per session on every path it
applies to: `otter run -a autograder.zip` (zip uploads cannot carry links), the zip's run_otter.py
in Gradescope's /autograder layout (what Gradescope and `otter grade` run), and the project's
Gradescope entry point. Every payload writes a marker into a folder the test planted if it ever runs.
"""

from __future__ import annotations

import functools
import json
import secrets
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import otter_uploads as uploads
import pytest

from autograder.i18n import t as catalogue_text

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(2400)]  # the module fixture grades six times on a shared machine
UNIT_QUESTIONS = {"q1", "q2", "q3", "q4", "q5"}


def _planted(root: Path) -> uploads.Planted:
    root.mkdir(parents=True)
    (root / "markers").mkdir()
    token = secrets.token_hex(16)
    secret = root / "grader-secret.py"
    secret.write_text(f"API_TOKEN = {token!r}\n", encoding="utf-8")
    return uploads.Planted(root / "markers", secret, token)


JOBS = {
    ("payloads", "otter run"): uploads.run_otter_cli,
    ("payloads", "zip"): uploads.run_zip_entry,
    ("parse", "zip"): uploads.run_zip_entry,
    ("links", "zip"): uploads.run_zip_entry,
    ("links", "gradescope"): uploads.run_gradescope,
    ("parse", "cli"): None,
}
# The Gradescope entry point never unpickles or starts Otter's kernel, and grades with the CLI's
# engine: these two cost a minute of grading each, so they run with the slow tests.
SLOW_JOBS = {("payloads", "gradescope"): uploads.run_gradescope, ("parse", "gradescope"): uploads.run_gradescope}


def grade_all(jobs: dict, autograder_zip: Path, multi30k_dir: Path, base: Path) -> dict:
    """(upload, path) -> (Outcome, or the CLI's points; Planted; work folder), two at a time."""

    def run(key: tuple[str, str]) -> tuple:
        upload, path = key
        work = base / f"{upload}-{path.replace(' ', '-')}"
        planted = _planted(work / "planted")
        builder, runner = uploads.UPLOADS[upload], jobs[key]
        if runner is None:
            return (
                uploads.run_cli(uploads.unparsable_notebook(work / "hw.ipynb"), work / "out", multi30k_dir),
                planted,
                work,
            )
        if runner is uploads.run_gradescope:
            return runner(builder, planted, work / "run", multi30k_dir), planted, work
        return runner(builder, planted, autograder_zip, work / "run", multi30k_dir), planted, work

    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(jobs, pool.map(run, jobs), strict=True))
    print(
        "\n"
        + "\n".join(
            f"{u} via {p}: {o.total if hasattr(o, 'total') else o} points, {getattr(o, 'seconds', 0):.1f} s"
            for (u, p), (o, _, _) in done.items()
        )
    )
    return done


@pytest.fixture(scope="module")
def attacked(autograder_zip: Path, multi30k_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every upload graded once on each path it applies to (slow ones only when asked for)."""
    return grade_all(JOBS, autograder_zip, multi30k_dir, tmp_path_factory.mktemp("otter-attacks"))


@pytest.fixture(scope="module")
def attacked_slow(autograder_zip: Path, multi30k_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The uploads on the Gradescope entry point that need a full grading."""
    return grade_all(SLOW_JOBS, autograder_zip, multi30k_dir, tmp_path_factory.mktemp("otter-attacks-slow"))


def _graded_by_the_engine(outcome: uploads.Outcome) -> None:
    names = set(outcome.scores)
    assert names and not any("Autograder" in name for name in names), outcome.log[-3000:]
    if outcome.path != "gradescope run.py":
        assert names == UNIT_QUESTIONS, names


@pytest.mark.parametrize("path", ["otter run", "zip", pytest.param("gradescope", marks=pytest.mark.slow)])
def test_otter_state_and_shadowing_modules_run_nothing(
    request: pytest.FixtureRequest, path: str, autograder_zip: Path
) -> None:
    results = request.getfixturevalue("attacked_slow" if path == "gradescope" else "attacked")
    outcome, planted, work = results[("payloads", path)]
    _graded_by_the_engine(outcome)
    assert outcome.total == 0, outcome.document
    assert planted.written() == [], "a payload ran: " + outcome.log[-3000:]
    if path == "zip":  # the engine the zip ships is untouched
        with zipfile.ZipFile(autograder_zip) as archive:
            for name in archive.namelist():
                if name.startswith("autograder/") and name.endswith(".py"):
                    assert (work / "run" / "autograder" / "source" / name).read_bytes() == archive.read(name), name
    if path != "gradescope":
        assert ".OTTER_LOG" in outcome.document.get("output", ""), "the refusal is reported"


@pytest.mark.parametrize("path", ["zip", pytest.param("gradescope", marks=pytest.mark.slow)])
def test_notebooks_otter_cannot_parse_get_the_cli_score(
    request: pytest.FixtureRequest, attacked: dict, path: str
) -> None:
    cli_points = attacked[("parse", "cli")][0]
    assert cli_points == 80
    results = request.getfixturevalue("attacked_slow" if path == "gradescope" else "attacked")
    outcome = results[("parse", path)][0]
    _graded_by_the_engine(outcome)
    assert outcome.total == cli_points, outcome.document


# Notebooks Otter's own reader rejects, graded by the bare `otter run` where the project is installed
# (its start-up hook, autograder/integrations/otter_hook.py, makes Otter's check lenient for this
# plugin): name -> (source notebook, what is done to it).
REJECTED = {
    **{defect: (uploads.CORRECT, (defect,)) for defect in uploads.OTTER_REJECTS},
    "template": (uploads.TEMPLATE, ("bom", "cell-without-metadata", "otter-list")),
}


@pytest.fixture(scope="module")
def rejected(
    autograder_zip: Path, multi30k_dir: Path, installed_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    """Each REJECTED notebook through `otter run` with the installed hook; the CLI's points for all of
    them (one run); and the byte-order-mark one through `otter run` without the hook (the control)."""
    base = tmp_path_factory.mktemp("otter-rejected")
    files = {
        name: uploads.otter_rejected_notebook(source, defects, base / "files" / f"{name}.ipynb")
        for name, (source, defects) in REJECTED.items()
    }
    jobs: dict[str, Callable[[], object]] = {
        "cli": lambda: uploads.run_cli_many(list(files.values()), base / "cli", multi30k_dir),
        "no hook": lambda: uploads.otter_run(
            files["bom"], autograder_zip, base / "no-hook", multi30k_dir, without_hook=True
        ),
    }
    for name, path in files.items():
        jobs[name] = functools.partial(
            uploads.otter_run, path, autograder_zip, base / name, multi30k_dir, installed_project
        )
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(jobs, pool.map(lambda job: job(), jobs.values()), strict=True))
    print("\nCLI points:", done["cli"])
    for name in ["no hook", *files]:
        print(f"otter run, {name}: {done[name].total} points, {done[name].seconds:.1f} s")
    return done


@pytest.mark.parametrize("name", list(REJECTED))
def test_otter_run_grades_notebooks_otter_rejects_like_the_cli(rejected: dict, name: str) -> None:
    cli_points = rejected["cli"][name]
    assert cli_points == (0 if name == "template" else 80)
    outcome = rejected[name]
    _graded_by_the_engine(outcome)
    assert outcome.total == cli_points, outcome.log[-3000:]


def test_without_the_hook_otter_run_stops_at_its_reader(rejected: dict) -> None:
    outcome = rejected["no hook"]  # what the hook changes: Otter's reader raises, nothing is graded
    assert outcome.document == {}, outcome.document
    assert "NotJSONError" in outcome.log or "does not appear to be JSON" in outcome.log, outcome.log[-3000:]


@pytest.mark.parametrize("path", ["zip", "gradescope"])
def test_links_in_an_upload_are_never_followed(attacked: dict, path: str) -> None:
    outcome, planted, _ = attacked[("links", path)]
    assert outcome.total == 0, outcome.document
    assert planted.written() == [], outcome.log[-3000:]
    text = json.dumps(outcome.document, ensure_ascii=False)
    assert planted.token not in text and planted.token not in outcome.log
    # Each refused link is named with its reason, from the catalogue, in the student's language
    # (grader.yml: ko) on both routes: the zip's run_otter.py refuses them before Otter starts.
    for kind in ("symlink", "hard_link"):
        assert catalogue_text(f"upload.{kind}", language="ko") in text, text[:3000]
