"""Helpers of the container tests: the engine and image (container/), `otter grade`, the CLI's scores."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CONTAINER_DIR = REPO / "container"
CACHE = Path(os.environ.get("GRADING_IMAGE_CACHE", "/var/cache/grading-image"))
IMAGE = os.environ.get("GRADING_IMAGE", "transformer-grading:latest")
# Set by .ci/run's containers tier: a missing engine or image fails there instead of skipping.
REQUIRED = os.environ.get("CONTAINER_TESTS_REQUIRED") == "1"
# The engine's worker isolation inside a default container (no extra capabilities, default seccomp):
# empty, the zip's own setting (`auto`: the namespace jail cannot start there, so a root grader takes
# the jail without namespaces, `uid`); `weak` measures the best-effort fallback instead (docs/OTTER.md).
ISOLATION = os.environ.get("CONTAINER_WORKER_ISOLATION", "")


def docker_env() -> dict[str, str]:
    """The environment `otter grade` and `docker` run with: the buildx plugin's DOCKER_CONFIG."""
    return {**os.environ, "DOCKER_CONFIG": str(CACHE / "docker-config"), "GRADING_IMAGE": IMAGE}


def docker(*args: str, check: bool = True) -> str:
    """Run Docker's CLI and return its standard output.

    Args:
        args: the command's arguments.
        check: raise when it fails.

    Returns:
        What it printed.
    """
    done = subprocess.run(["docker", *args], env=docker_env(), capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def require_engine() -> None:
    """Skip (fail where REQUIRED) unless root, a running dockerd and the grading image are here."""
    reason = ""
    if os.geteuid() != 0:
        reason = "the container tests run as root (dockerd)"
    elif shutil.which("docker") is None:
        reason = "no docker CLI (bash container/engine.sh install)"
    elif subprocess.run(["docker", "info"], env=docker_env(), capture_output=True).returncode != 0:
        reason = "no dockerd answers (bash container/engine.sh start)"
    elif not image_exists(IMAGE):
        reason = f"no image {IMAGE} (make grading-image)"
    if reason:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)


def leftovers(image: str) -> tuple[set[str], set[str]]:
    """The containers (running or not) made from `image`, and every volume the engine holds now.

    Args:
        image: an image name, e.g. Otter's `otter-grade:NAME` (other tests' containers are not counted).
    """
    made = set(docker("ps", "-aq", "--filter", f"ancestor={image}").split()) if image_exists(image) else set()
    return made, set(docker("volume", "ls", "-q").split())


def image_exists(image: str) -> bool:
    """Whether the engine holds this image."""
    return subprocess.run(["docker", "image", "inspect", image], env=docker_env(), capture_output=True).returncode == 0


def zip_with_isolation(source: Path, destination: Path) -> Path:
    """A copy of an Otter autograder zip whose plugin grades with worker.isolation=ISOLATION.

    Args:
        source: the zip `make template` wrote.
        destination: where to write the copy.

    Returns:
        destination (source's bytes when ISOLATION is empty).
    """
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as copy:
        for info in original.infolist():
            data = original.read(info)
            if info.filename == "otter_config.json" and ISOLATION:
                config = json.loads(data)
                for plugin in config["plugins"]:
                    for options in plugin.values():
                        options.setdefault("settings", {})["worker.isolation"] = ISOLATION
                data = json.dumps(config, indent=2).encode()
            copy.writestr(info, data)
    return destination


def built_zip(folder: Path, assignment: str) -> dict[str, Path]:
    """Build an assignment's Otter autograder zip (and its solution notebook) into `folder`, as
    `make template` does, without touching the checkout's student_template/ or dist/.

    Returns:
        {"zip", "solution", "student"} paths.
    """
    from assignments import build

    return build.build(folder / "student", folder / "dist", part=build.target(assignment))


def questions_of(autograder_zip: Path) -> dict[str, str]:
    """The plugin's part -> Otter question map in an autograder zip's otter_config.json."""
    config = json.loads(zipfile.ZipFile(autograder_zip).read("otter_config.json"))
    return next(iter(config["plugins"][0].values()))["questions"]


@dataclass
class OtterRun:
    """One `otter grade` run: per notebook stem, the points of each question; its wall time."""

    grades: dict[str, dict[str, float]]
    statuses: dict[str, str]
    wall_s: float
    output: str


def otter_grade(autograder_zip: Path, name: str, notebooks: list[Path], out: Path, containers: int) -> OtterRun:
    """Grade notebooks with Otter's own `otter grade` (container/otter-grade.sh), with --no-network.

    Args:
        autograder_zip: the Otter autograder zip.
        name: the assignment name Otter tags its image with.
        notebooks: the .ipynb files.
        out: Otter's output folder (created).
        containers: how many containers at once.

    Returns:
        The grades of final_grades.csv and the run's wall time.
    """
    out.mkdir(parents=True, exist_ok=True)
    command = ["bash", str(CONTAINER_DIR / "otter-grade.sh"), "-n", name, "-a", str(autograder_zip), "-o", str(out)]
    command += ["--image", IMAGE, "--no-network", "--containers", str(containers), *map(str, notebooks)]
    env = {**docker_env(), "OTTER": str(Path(sys.executable).parent / "otter")}
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    assert done.returncode == 0, f"otter grade failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    grades, statuses = {}, {}
    with open(out / "final_grades.csv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["file"] == "points-per-question":
                continue
            stem = Path(row["file"]).stem
            statuses[stem] = row["grading_status"]
            grades[stem] = {key: float(value) for key, value in row.items() if key.startswith("q") and value}
    return OtterRun(grades, statuses, wall, done.stdout + done.stderr)


def cli_parts(notebooks: list[Path], out: Path, assignment: str | None = None) -> dict[str, dict[str, Any]]:
    """The CLI's per-part points (`python -m autograder grade`, on this host), per notebook stem.

    Args:
        notebooks: the .ipynb files.
        out: the CLI's --out folder.
        assignment: --assignment, or None for the default (Part 2).

    Returns:
        stem -> {"status": ..., "parts": {part: points}}.
    """
    command = [sys.executable, "-m", "autograder", "grade", *map(str, notebooks), "--out", str(out), "--jobs", "2"]
    command += ["--assignment", assignment] if assignment else []
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"the CLI failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    results = {}
    for notebook in notebooks:
        record = json.loads((out / f"{notebook.stem}.json").read_text(encoding="utf-8"))
        results[notebook.stem] = {
            "status": record["status"],
            "parts": {part["part"]: part["points"] for part in record["parts"]},
        }
    return results
