"""A detached git worktree of another commit, for the benchmarks that compare this checkout with it."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def detached_worktree(revision: str) -> Iterator[Path]:
    """Check out `revision` as a detached worktree in a temporary folder, removed again on exit.

    Args:
        revision: any git revision.

    Yields:
        The worktree's root.
    """
    git = ["git", "-C", str(REPO_ROOT), "worktree"]
    with tempfile.TemporaryDirectory(prefix="other-commit-") as folder:
        path = Path(folder) / "other"
        subprocess.run([*git, "add", "--detach", "--quiet", str(path), revision], check=True)
        try:
            yield path
        finally:
            subprocess.run([*git, "remove", "--force", str(path)], check=False)
