"""Gradescope: run_autograder on the examples writes a valid results.json; setup.sh; the zip."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest
from workflow_tools import EXAMPLE_NAMES, EXAMPLES, ROOT

from autograder.assignment import load_assignment
from autograder.config import ConfigError, load_config
from autograder.i18n import t
from autograder.integrations.gradescope.build_zip import build_zip
from autograder.integrations.gradescope.run import _private_copy, environment_overrides, pick_submission
from autograder.integrations.upload_guard import scan_upload

GRADESCOPE = ROOT / "autograder" / "integrations" / "gradescope"
NOTEBOOK_FIXTURES = ROOT / "tests" / "fixtures" / "notebooks"
SCHEMA_PATH = ROOT / "autograder" / "reports" / "schemas" / "gradescope_results.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))  # Gradescope's results.json


def run_autograder(root: Path, upload: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    """Gradescope's layout under `root` (submission/, results/), then the real run_autograder."""
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    for name, source in upload.items():
        target = root / "submission" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    env = {
        **os.environ,
        "AUTOGRADER_ROOT": str(root),
        "AUTOGRADER_SOURCE": str(ROOT),
        "AUTOGRADER_PYTHON": sys.executable,
        "MTKIT_CACHE_DIR": str(root / "cache"),
    }
    return subprocess.run(
        ["bash", str(GRADESCOPE / "run_autograder")], env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def gradescope_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """results.json of the three examples, each graded by run_autograder (two at a time)."""

    def grade(name: str) -> dict:
        root = tmp_path_factory.mktemp(f"gradescope-{name}")
        done = run_autograder(root, {f"{name}.ipynb": EXAMPLES / f"{name}.ipynb"})
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(EXAMPLE_NAMES, pool.map(grade, EXAMPLE_NAMES), strict=True))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_results_json_is_valid_and_the_score_is_the_sum_of_its_parts(gradescope_results, graded_examples, name) -> None:
    document = gradescope_results[name]
    jsonschema.validate(document, SCHEMA)
    assert document["score"] == sum(test["score"] for test in document["tests"])
    cli = json.loads((graded_examples / "grading-output" / f"{name}.json").read_text(encoding="utf-8"))
    assert document["score"] == cli["points"]
    by_part: dict[str, float] = {}
    for test in document["tests"]:
        by_part[test["tags"][0]] = by_part.get(test["tags"][0], 0) + test["score"]
    assert by_part == {p["part"]: p["points"] for p in cli["parts"] if p["part"] != "training"}
    # skipped, and said so (in grader.yml's feedback language, Korean)
    assert t("gradescope.not_graded_heading", language="ko") in document["output"]
    assert t("training.disabled", language="ko") in document["output"]


def test_scores_per_example(gradescope_results) -> None:
    scores = {name: doc["score"] for name, doc in gradescope_results.items()}
    assert scores == {"correct_original_format": 80, "buggy_original_format": 62, "template_untouched": 0}


def test_an_upload_without_a_notebook_gets_a_valid_zero(tmp_path: Path) -> None:
    done = run_autograder(tmp_path, {"notes.txt": ROOT / "README.md"})
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, SCHEMA)
    assert document["score"] == 0 and t("gradescope.no_notebook", language="ko") in document["output"]


def test_several_uploads_pick_one_notebook_and_say_which(tmp_path: Path) -> None:
    for name in ("b.ipynb", "a.ipynb", "folder/c.ipynb", ".ipynb_checkpoints/a-checkpoint.ipynb", "x.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}", encoding="utf-8")
    chosen, note = pick_submission(tmp_path)
    assert chosen == tmp_path / "a.ipynb" and "folder/c.ipynb" in note and "checkpoint" not in note
    assert pick_submission(tmp_path, "b.ipynb")[0] == tmp_path / "b.ipynb"
    assert pick_submission(tmp_path / "folder") == (tmp_path / "folder" / "c.ipynb", "")


def test_links_and_hard_links_are_never_picked(tmp_path: Path) -> None:
    upload, outside = tmp_path / "upload", tmp_path / "reference-model.py"
    upload.mkdir()
    outside.write_text("class Reference: ...", encoding="utf-8")
    (upload / "a.ipynb").symlink_to(outside)
    (upload / "b.py").symlink_to(outside)
    os.link(outside, upload / "c.py")
    assert pick_submission(upload) == (None, "")
    (upload / "d.py").write_text("x = 1", encoding="utf-8")
    assert pick_submission(upload) == (upload / "d.py", "")


def test_an_unreadable_upload_is_graded_zero_with_the_reason(tmp_path: Path) -> None:
    done = run_autograder(tmp_path, {"hw.ipynb": NOTEBOOK_FIXTURES / "corrupt.ipynb"})
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, SCHEMA)
    assert document["score"] == 0 and document["extra_data"]["status"] == "unreadable"


@pytest.mark.parametrize("mode", ["checkpoint", "recipe"])
def test_the_private_copy_takes_the_side_files_the_assignment_names(tmp_path: Path, mode: str) -> None:
    upload = tmp_path / "upload"
    (upload / "other").mkdir(parents=True)
    for name in ("hw.ipynb", "hw.pt", "checkpoint.pth", "notes.pt", "other/hw.pt"):
        (upload / name).write_bytes(name.encode())
    config = load_config(None, {"training.mode": mode})
    sidecar_names = load_assignment(config.assignment.name).sidecar_names
    assert sidecar_names is not None
    private = tmp_path / "private"
    private.mkdir()
    names = sidecar_names(config, "hw")
    copy = _private_copy(upload, upload / "hw.ipynb", scan_upload(upload), private, names)
    assert copy == private / "hw.ipynb"
    copied = sorted(p.name for p in private.iterdir())
    # checkpoint mode: Part 2's checkpoint names, beside the notebook only; the other modes read none
    assert copied == (["checkpoint.pth", "hw.ipynb", "hw.pt"] if mode == "checkpoint" else ["hw.ipynb"])
    assert all((private / name).read_bytes() == name.encode() for name in copied)


def test_environment_switches_training_on() -> None:
    environ = {"AUTOGRADER_TRAIN": "1", "AUTOGRADER_SET": "training.profile=cpu; worker.memory_mb=8192"}
    assert environment_overrides(environ) == {
        "training.profile": "cpu",
        "worker.memory_mb": 8192,
        "training.enabled": True,
    }
    assert environment_overrides({}) == {}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        environment_overrides({"AUTOGRADER_SET": "training.profile"})


def test_setup_script_installs_python_311_and_the_pinned_environment(tmp_path: Path) -> None:
    """setup.sh with stand-ins for apt-get, python3.11 and the venv's python (no network here)."""
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    venv = tmp_path / "venv"
    fake_python = (
        f'#!/bin/sh\necho "$(basename $0) $*" >> "{log}"\n'
        'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin"; '
        'cp "$0" "$3/bin/python"; fi\n'
    )
    for name, body in {"python3.11": fake_python, "apt-get": f'#!/bin/sh\necho "apt-get $*" >> "{log}"\n'}.items():
        (bin_dir / name).write_text(body, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    source = tmp_path / "source"
    shutil.copytree(ROOT / "autograder" / "integrations", source / "autograder" / "integrations")
    shutil.copyfile(ROOT / "requirements.lock", source / "requirements.lock")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "AUTOGRADER_SOURCE": str(source),
        "AUTOGRADER_VENV": str(venv),
    }
    done = subprocess.run(["bash", str(GRADESCOPE / "setup.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert f"python3.11 -m venv {venv}" in calls and not any("add-apt-repository" in c for c in calls)
    torch_call = calls.index("python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu")
    assert calls[torch_call + 1].startswith("python -m pip install -r ")
    assert calls[-1] == "python -m autograder validate-config"
    assert not source.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO)  # grader hidden from others


def test_zip_has_the_entry_points_at_its_root_and_no_tests(tmp_path: Path) -> None:
    data = tmp_path / "multi30k"
    data.mkdir()
    for name in ("train.de.gz", "val.en.gz", "notes.txt"):
        (data / name).write_bytes(b"x")
    first = build_zip(tmp_path / "a.zip", data)
    second = build_zip(tmp_path / "b.zip", data)
    assert first.read_bytes() == second.read_bytes()  # deterministic
    with zipfile.ZipFile(first) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    assert {"setup.sh", "run_autograder", "grader.yml", "requirements.lock"} <= names
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert (
        "assignments/transformer_mt/checks/test_look_ahead_mask.py" in names
        and "assignments/transformer_mt/reference/model.py" in names
    )
    assert {"data/multi30k/train.de.gz", "data/multi30k/val.en.gz"} <= names
    assert not any(
        n.startswith(("tests/", "examples/", ".venv/", "student_template/", "data/multi30k/notes"))
        or "__pycache__" in n
        for n in names
    )
