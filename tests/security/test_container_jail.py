"""Root in a default podman container (no namespaces): the jail without namespaces holds, and grades as on the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from identities import in_default_container

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = os.geteuid() == 0
pytestmark = pytest.mark.skipif(not IS_ROOT, reason="podman's default containers are started as root here")
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_gradescope_layout_is_closed_to_the_worker_in_a_default_container(tmp_path):
    """Root in a default podman container (namespaces refused): a worker cannot open the hidden
    checks, another upload or the results under /autograder (Gradescope's and Otter's layout)."""
    probe = ROOT / "tests" / "fixtures" / "security" / "gradescope_layout_probe.py"
    env = {**ENV, "HOME": str(tmp_path)}
    argv = in_default_container([sys.executable, str(probe)], ROOT, tmp_path, env)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=500)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(report)
    assert report["isolation"] == "uid"
    assert "read" not in report["seen"].values() and set(report["seen"].values()) == {"Permission denied"}
    assert report["modes"]["/autograder"] == "0o750"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_correct_example_gets_the_same_points_inside_the_container(tmp_path):
    """The CLI on the correct example, on the host (root jail) and in the container (the jail
    without namespaces): the same points per part; the container's report folder is closed to
    other users."""
    example = "examples/correct_original_format.ipynb"
    scores = {}
    for where in ("host", "container"):
        out = tmp_path / where
        argv = [sys.executable, "-m", "autograder", "grade", example, "--out", str(out)]
        env = {**ENV, "HOME": str(tmp_path)}
        env.update({key: os.environ[key] for key in ("MULTI30K_DIR",) if key in os.environ})
        if where == "container":
            argv = in_default_container(argv, ROOT, tmp_path, env)
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=800)
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads((out / "correct_original_format.json").read_text())
        scores[where] = (result["isolation"], {part["part"]: part["points"] for part in result["parts"]})
    print(scores)
    assert scores["host"][0] == "namespace" and scores["container"][0] == "uid"
    assert scores["container"][1] == scores["host"][1] and sum(scores["host"][1].values()) == 80
    assert os.stat(tmp_path / "container").st_mode & 0o007 == 0
