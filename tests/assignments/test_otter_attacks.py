"""Uploads that attack the Otter paths score what the CLI gives and run nothing outside the sandbox.

Each upload (tests/assignments/otter_uploads.py) is graded once per session on every path it
applies to: `otter run -a autograder.zip` (zip uploads cannot carry links), the zip's run_otter.py
in Gradescope's /autograder layout (what Gradescope and `otter grade` run), and the project's
Gradescope entry point. Every payload writes a marker into a folder the test planted if it ever runs.
"""

from __future__ import annotations

import json
import secrets
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import otter_uploads as uploads

pytestmark = pytest.mark.timeout(2400)   # the session fixture grades eight times on a shared machine
UNIT_QUESTIONS = {"q1", "q2", "q3", "q4", "q5"}


def _planted(root: Path) -> uploads.Planted:
    root.mkdir(parents=True)
    (root / "markers").mkdir()
    token = secrets.token_hex(16)
    secret = root / "grader-secret.py"
    secret.write_text(f"API_TOKEN = {token!r}\n", encoding="utf-8")
    return uploads.Planted(root / "markers", secret, token)


@pytest.fixture(scope="module")
def attacked(autograder_zip: Path, multi30k_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """(upload, path) -> (Outcome or CLI points, Planted, work folder), all run two at a time."""
    base = tmp_path_factory.mktemp("otter-attacks")
    jobs = {("payloads", "otter run"): uploads.run_otter_cli, ("payloads", "zip"): uploads.run_zip_entry,
            ("payloads", "gradescope"): uploads.run_gradescope, ("parse", "zip"): uploads.run_zip_entry,
            ("parse", "gradescope"): uploads.run_gradescope, ("links", "zip"): uploads.run_zip_entry,
            ("links", "gradescope"): uploads.run_gradescope}

    def run(key: tuple[str, str]) -> tuple:
        upload, path = key
        work = base / f"{upload}-{path.replace(' ', '-')}"
        planted = _planted(work / "planted")
        builder = uploads.UPLOADS[upload]
        if path == "cli":
            return uploads.run_cli(uploads.unparsable_notebook(work / "hw.ipynb"), work / "out", multi30k_dir), planted, work
        runner = jobs[key]
        if runner is uploads.run_gradescope:
            return runner(builder, planted, work / "run", multi30k_dir), planted, work
        return runner(builder, planted, autograder_zip, work / "run", multi30k_dir), planted, work

    keys = [*jobs, ("parse", "cli")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(keys, pool.map(run, keys)))
    print("\n" + "\n".join(f"{u} via {p}: {o.total if hasattr(o, 'total') else o} points, "
                           f"{getattr(o, 'seconds', 0):.1f} s" for (u, p), (o, _, _) in done.items()))
    return done


def _graded_by_the_engine(outcome: uploads.Outcome) -> None:
    names = set(outcome.scores)
    assert names and not any("Autograder" in name for name in names), outcome.log[-3000:]
    if outcome.path != "gradescope run.py":
        assert names == UNIT_QUESTIONS, names


@pytest.mark.parametrize("path", ["otter run", "zip", "gradescope"])
def test_otter_state_and_shadowing_modules_run_nothing(attacked: dict, path: str, autograder_zip: Path) -> None:
    outcome, planted, work = attacked[("payloads", path)]
    _graded_by_the_engine(outcome)
    assert outcome.total == 0, outcome.document
    assert planted.written() == [], "a payload ran: " + outcome.log[-3000:]
    if path == "zip":   # the engine the zip ships is untouched
        with zipfile.ZipFile(autograder_zip) as archive:
            for name in archive.namelist():
                if name.startswith("autograder/") and name.endswith(".py"):
                    assert (work / "run" / "autograder" / "source" / name).read_bytes() == archive.read(name), name
    if path != "gradescope":
        assert ".OTTER_LOG" in outcome.document.get("output", ""), "the refusal is reported"


@pytest.mark.parametrize("path", ["zip", "gradescope"])
def test_notebooks_otter_cannot_parse_get_the_cli_score(attacked: dict, path: str) -> None:
    cli_points = attacked[("parse", "cli")][0]
    assert cli_points == 80
    outcome = attacked[("parse", path)][0]
    _graded_by_the_engine(outcome)
    assert outcome.total == cli_points, outcome.document


@pytest.mark.parametrize("path", ["zip", "gradescope"])
def test_links_in_an_upload_are_never_followed(attacked: dict, path: str) -> None:
    outcome, planted, _ = attacked[("links", path)]
    assert outcome.total == 0, outcome.document
    assert planted.written() == [], outcome.log[-3000:]
    text = json.dumps(outcome.document)
    assert planted.token not in text and planted.token not in outcome.log
    assert "symbolic link" in text and "hard link" in text, text[:3000]
