"""Shared pytest fixtures: location of the real Multi30k files, the project as `pip install .` installs it."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# Before torch is imported anywhere: busy-waiting OpenMP threads slow tests 3-5x on a shared
# 2-core machine (the Makefile exports the same setting).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest
from xdist_groups import GROUPS_DIR_KEY, groups_of, make_fixture_group_scheduler, write_groups

REPO_ROOT = Path(__file__).resolve().parents[1]
# shared/ sits beside the repository checkout (in development and in CI alike).
DEFAULT_MULTI30K_DIRS = (REPO_ROOT.parent / "shared" / "data" / "multi30k",)
# What `pip install .` builds the project from (pyproject.toml, setup.py and the packages).
PROJECT_SOURCES = ("pyproject.toml", "setup.py", "requirements.lock", "autograder", "assignments", "mtkit")
# The slow reference run's wall-clock cap, as a multiple of the cpu profile's time_budget_s (a loaded
# CI machine runs it several times slower than a quiet one), and where its CPU seconds are written.
LOADED_MACHINE_WALL_FACTOR = 3
CPU_TIME_FILE = "CPU_TIME.json"
# The xdist controller's folder for the workers' group tables (pytest_configure).
_GROUPS_DIR = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def multi30k_dir() -> Path:
    """The raw Multi30k folder: env MULTI30K_DIR, else shared/data/multi30k beside the repo."""
    from_env = os.environ.get("MULTI30K_DIR")
    if from_env:
        return Path(from_env)  # set explicitly: a wrong path should fail, not skip
    for candidate in DEFAULT_MULTI30K_DIRS:
        if candidate.is_dir():
            return candidate
    pytest.skip("real Multi30k data not found; set MULTI30K_DIR")


@pytest.fixture(scope="session")
def reference_cpu_run(tmp_path_factory: pytest.TempPathFactory, multi30k_dir: Path) -> Path:
    """Slow: train the reference with the full `cpu` profile once per session.

    Returns:
        The run's output folder (checkpoint.pt, metrics.json, ...). A failed run fails every test
        that uses it, with the trainer's output.
    """
    import json
    import resource
    import subprocess
    import sys

    from assignments.transformer_mt.settings import training_settings
    from autograder.config import load_config

    out = tmp_path_factory.mktemp("reference-cpu")
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "MULTI30K_DIR": str(multi30k_dir)}
    # The profile's wall-clock budget is what a quiet machine keeps; CI shares its cores with other
    # work, so the run gets a longer cap and the test checks the budget in CPU seconds instead
    # (reference_cpu_seconds), which other processes on the machine barely change.
    wall_cap_s = LOADED_MACHINE_WALL_FACTOR * training_settings(load_config()).profiles["cpu"].time_budget_s
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assignments.transformer_mt.reference_training",
            "--profile",
            "cpu",
            "--out",
            str(out),
            "--no-progress",
            "--time-budget",
            str(wall_cap_s),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    (out / CPU_TIME_FILE).write_text(json.dumps({"cpu_s": round(cpu_s, 1), "wall_cap_s": wall_cap_s}))
    return out


@pytest.fixture(scope="session")
def reference_cpu_seconds(reference_cpu_run: Path) -> float:
    """CPU seconds (user + system) the reference's `cpu` profile run took, data preparation included."""
    import json

    return float(json.loads((reference_cpu_run / CPU_TIME_FILE).read_text())["cpu_s"])


@pytest.fixture(scope="session")
def installed_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project as `pip install .` installs it (without dependencies), in a folder of its own.

    Built from a copy of the sources (a build writes build/ and *.egg-info beside them) with the
    environment's setuptools, the version pyproject.toml pins. `site.addsitedir(folder)` makes the
    folder a site directory, running its .pth files as start-up does for site-packages.

    Returns:
        The folder (what site-packages would hold); the source copy is its sibling `source`.
    """
    base = tmp_path_factory.mktemp("installed-project")
    source = base / "source"
    source.mkdir()
    for name in PROJECT_SOURCES:
        path = REPO_ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copyfile(path, source / name)
    target = base / "site-packages"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    done = subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(target), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return target


@pytest.fixture(scope="session")
def assign_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Otter Assign's output folder (student/ and autograder/), built from a clean staging folder."""
    from assignments.transformer_mt import build

    return build.run_assign(tmp_path_factory.mktemp("assign"))


@pytest.fixture(scope="session")
def autograder_zip(assign_out: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The final autograder zip (Otter's zip plus the engine), as `make template` writes it."""
    from assignments.transformer_mt import build

    otter_zips = sorted((assign_out / "autograder").glob("*.zip"))
    assert len(otter_zips) == 1, otter_zips
    destination = tmp_path_factory.mktemp("dist") / build.ZIP_NAME
    build.package_zip(otter_zips[0], destination)
    return destination


def pytest_configure(config: pytest.Config) -> None:
    """On the xdist controller: the folder where the workers write their tests' groups."""
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.stash[_GROUPS_DIR] = Path(tempfile.mkdtemp(prefix="xdist-groups-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the groups folder (controller only)."""
    groups_dir = config.stash.get(_GROUPS_DIR, None)
    if groups_dir is not None:
        shutil.rmtree(groups_dir, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tell each xdist worker where to write its tests' groups (a pytest-xdist hook)."""
    node.workerinput[GROUPS_DIR_KEY] = str(node.config.stash[_GROUPS_DIR])


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup`: whole groups (tests/xdist_groups.py) per worker, each built once."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return make_fixture_group_scheduler(config, log, config.stash[_GROUPS_DIR])


def pytest_collection_finish(session: pytest.Session) -> None:
    """On an xdist worker: write each collected test's group for the controller's scheduler."""
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is not None and GROUPS_DIR_KEY in workerinput:
        write_groups(Path(workerinput[GROUPS_DIR_KEY]), workerinput["workerid"], groups_of(session.items))
