"""Session fixtures of the assignment tests: the master with solutions, the shared data cache.

`assign_out` and `autograder_zip` live in tests/conftest.py: the security tests grade with the zip too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assignments.transformer_mt import build


@pytest.fixture(scope="session")
def solution_notebook(assign_out: Path) -> Path:
    """The master with solutions, as Otter writes it for the autograder (tests/ and mtkit/ beside it)."""
    return assign_out / "autograder" / build.MASTER.name


@pytest.fixture(scope="session")
def mtkit_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prepared-data cache shared by every notebook kernel of the session."""
    return tmp_path_factory.mktemp("mtkit-cache")
