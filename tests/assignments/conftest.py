"""Session fixtures of the assignment tests: one `otter assign` run and the packaged autograder zip."""

from __future__ import annotations

from pathlib import Path

import pytest

from assignments.transformer_mt import build


@pytest.fixture(scope="session")
def assign_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Otter Assign's output folder (student/ and autograder/), built from a clean staging folder."""
    return build.run_assign(tmp_path_factory.mktemp("assign"))


@pytest.fixture(scope="session")
def autograder_zip(assign_out: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The final autograder zip (Otter's zip plus the engine), as `make template` writes it."""
    otter_zips = sorted((assign_out / "autograder").glob("*.zip"))
    assert len(otter_zips) == 1, otter_zips
    destination = tmp_path_factory.mktemp("dist") / build.ZIP_NAME
    build.package_zip(otter_zips[0], destination)
    return destination


@pytest.fixture(scope="session")
def solution_notebook(assign_out: Path) -> Path:
    """The master with solutions, as Otter writes it for the autograder (tests/ and mtkit/ beside it)."""
    return assign_out / "autograder" / build.MASTER.name


@pytest.fixture(scope="session")
def mtkit_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prepared-data cache shared by every notebook kernel of the session."""
    return tmp_path_factory.mktemp("mtkit-cache")
