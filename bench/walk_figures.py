"""Benchmark: the walk of one `grade` command through the grader's own files (files entered, re-entries).

Runs `python -m autograder grade NOTEBOOK --jobs 1 --quiet --out TMP` in this process under a profile
hook and records every call from one project file into another; the standard library, site-packages,
module bodies run by imports and calls within one file are left out. Reported: how many project files
the walk passes, and per file how often it is re-entered (calls into it from another file, minus the
first). The sandboxed worker runs in its own process and is not part of the walk. Run it with another
checkout's code by putting that checkout first on PYTHONPATH.

Usage: python bench/walk_figures.py [NOTEBOOK] [--top 10]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def project_file(path: str, root: Path) -> str | None:
    """Returns: the path relative to the checkout, or None when it is not one of the project's files."""
    if path.startswith("<"):  # frozen modules and code compiled from strings
        return None
    try:
        relative = Path(path).resolve().relative_to(root)
    except ValueError:
        return None
    first = relative.parts[0] if relative.parts else ""
    return None if first.startswith(".") or first in {"tests", "bench"} else str(relative)


def walk(argv: list[str], root: Path) -> tuple[list[str], Counter[str]]:
    """Run the CLI with a profile hook on every thread.

    Args:
        argv: the arguments after `python -m autograder`.
        root: the checkout whose files count.

    Returns:
        (the project files in the order first entered, calls into each file from another file).
    """
    from autograder.cli import main as cli_main

    order: list[str] = []
    entries: Counter[str] = Counter()
    known: dict[str, str | None] = {}

    def file_of(frame: FrameType | None) -> str | None:
        if frame is None:
            return None
        name = frame.f_code.co_filename
        if name not in known:
            known[name] = project_file(name, root)
        return known[name]

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>":  # imports are not the walk
            return
        callee = file_of(frame)
        if callee is None or callee == file_of(frame.f_back):
            return
        if callee not in entries:
            order.append(callee)
        entries[callee] += 1

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        cli_main(argv)
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return order, entries


def main() -> int:
    """Print the walk's figures as JSON.

    Returns:
        0.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebook", nargs="?", default=str(REPO_ROOT / "examples" / "correct_original_format.ipynb"))
    parser.add_argument("--top", type=int, default=10, help="how many of the most re-entered files to list")
    args = parser.parse_args()
    import autograder

    root = Path(autograder.__file__).resolve().parents[1]  # the checkout whose code is imported
    with tempfile.TemporaryDirectory(prefix="walk-") as out:
        order, entries = walk(["grade", args.notebook, "--jobs", "1", "--quiet", "--out", out], root)
    reentries = {name: count - 1 for name, count in entries.most_common() if count > 1}
    figures = {
        "checkout": str(root),
        "files_on_walk": len(order),
        "re_entries_total": sum(reentries.values()),
        "most_re_entered": dict(list(reentries.items())[: args.top]),
        "front_end_and_batch": {name: reentries.get(name, 0) for name in ("autograder/cli.py", "autograder/batch.py")},
        "files": order,
    }
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
