"""Gradescope's route for real: an image built from the Gradescope zip's setup.sh as Gradescope builds
it (root, the zip in /autograder/source), run_autograder on an upload in /autograder/submission."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from container_tools import ISOLATION, REPO, cli_parts, docker, docker_env, leftovers, require_engine

pytestmark = [pytest.mark.slow, pytest.mark.container]

# What Gradescope does with an autograder zip, in Dockerfile form: the zip's contents in
# /autograder/source, setup.sh run once as root, run_autograder copied to /autograder/.
GRADESCOPE_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN mkdir -p /autograder/source /autograder/submission /autograder/results
COPY source/ /autograder/source/
RUN cd /autograder/source && bash ./setup.sh && cp /autograder/source/run_autograder /autograder/run_autograder \\
    && chmod +x /autograder/run_autograder
"""
TAG = "gradescope-autograder:test"


def results_summary(results: dict) -> dict:
    """The comparable part of a results.json: the total and each test's (name, score, max_score)."""
    return {"score": results["score"], "tests": [(t["name"], t["score"], t["max_score"]) for t in results["tests"]]}


def test_run_autograder_in_a_gradescope_built_container_scores_as_the_cli(tmp_path: Path) -> None:
    require_engine()
    zip_path = tmp_path / "gradescope-autograder.zip"
    build = [sys.executable, "-m", "autograder.integrations.gradescope.build_zip", "--out", str(zip_path)]
    subprocess.run(build, cwd=REPO, check=True, capture_output=True)
    context = tmp_path / "context"
    zipfile.ZipFile(zip_path).extractall(context / "source")
    for script in ("setup.sh", "run_autograder"):
        (context / "source" / script).chmod(0o755)
    (context / "Dockerfile").write_text(GRADESCOPE_DOCKERFILE, encoding="utf-8")
    before = leftovers(TAG)
    built = subprocess.run(
        ["docker", "buildx", "build", "--network", "none", "--build-arg", "BASE_IMAGE=" + docker_env()["GRADING_IMAGE"],
         "-t", TAG, str(context)],
        env=docker_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-4000:]
    # setup.sh found the grading image's environment: nothing downloaded (no network in the build).
    assert "python3.11 -m venv" not in built.stderr
    notebooks = [REPO / "examples" / "correct_original_format.ipynb", REPO / "examples" / "buggy_original_format.ipynb"]
    found = {}
    try:
        for notebook in notebooks:
            # Gradescope runs the container as root, with the network Gradescope gives; here none.
            env = ["-e", f"AUTOGRADER_SET=worker.isolation={ISOLATION}"] if ISOLATION else []
            # Then /autograder's mode: the jail without namespaces (the default here) closed it to other users.
            command = ["bash", "-c", "/autograder/run_autograder && stat -c 'autograder mode %a' /autograder"]
            container = docker("create", "--network", "none", *env, TAG, *command).strip()
            try:
                docker("cp", str(notebook), f"{container}:/autograder/submission/{notebook.name}")
                started = subprocess.run(["docker", "start", "-a", container], env=docker_env(), capture_output=True,
                                         text=True, check=False)  # fmt: skip
                assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
                closed = "autograder mode 750" in started.stdout
                assert closed is (ISOLATION in ("", "uid")), started.stdout[-300:]
                docker("cp", f"{container}:/autograder/results/results.json", str(tmp_path / f"{notebook.stem}.json"))
            finally:
                docker("rm", "-f", container)
            found[notebook.stem] = json.loads((tmp_path / f"{notebook.stem}.json").read_text(encoding="utf-8"))
    finally:
        docker("image", "rm", "-f", TAG, check=False)
    assert leftovers(TAG) == before
    cli_parts(notebooks, tmp_path / "cli")
    for notebook in notebooks:
        cli = json.loads((tmp_path / "cli" / f"{notebook.stem}.results.json").read_text(encoding="utf-8"))
        print(f"\n{notebook.stem}: container {found[notebook.stem]['score']}, CLI {cli['score']}")
        for (name, score, top), (_, cli_score, _) in zip(
            results_summary(found[notebook.stem])["tests"], results_summary(cli)["tests"], strict=False
        ):
            print(f"  {name}: container {score}/{top}, CLI {cli_score}")
        assert results_summary(found[notebook.stem]) == results_summary(cli), found[notebook.stem]["output"][-3000:]
    assert found["correct_original_format"]["score"] == 80 > found["buggy_original_format"]["score"]
