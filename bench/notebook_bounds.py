"""Benchmark: the grader's CPU seconds to read hostile notebooks (issue 38, break 3).

Writes the crafted `!echo "(` notebooks of the issue (317 KB, 1 MB) and notebooks of other hostile
shapes that stay within the loader's caps (one unparseable statement per line, 60 empty blocks per
cell, unclosed brackets, deep expressions, lines at the line cap), then times
`autograder.notebook.load_submission` on each in this process. With `--rev REV` it times the
loader of that git revision (checked out into a scratch worktree) instead, under a per-file CPU cap,
so that a quadratic loader can be measured on small sizes and extrapolated.

    python bench/notebook_bounds.py
    python bench/notebook_bounds.py --rev 336ebf6 --sizes 16,32 --cpu-cap 120
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "autograder"))
from test_notebook_bounds import crafted_notebook, notebook  # noqa: E402 - the test's generator

SHAPES = {
    "one broken statement per line": ["x)\n" * 300_000],
    "60 empty blocks per cell": ["".join(f"def f{i}():\n    # todo\n" for i in range(60)) + "y = 1\n" * 600] * 150,
    "unclosed brackets": ["".join(f"x{i} = (\n" for i in range(30_000))],
    "deep expressions": ["x = (" + "1+\n" * 5_000 + "1)\n"] * 60,
    "lines at the line cap": ["x = '" + "a" * 9_990 + "'\n"] * 99,
}
TIMER = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from autograder.notebook import load_submission; "
    "t = time.process_time(); load_submission(sys.argv[2], max_mb=20); print(time.process_time() - t)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="time this git revision's loader (default: the working tree's)")
    parser.add_argument("--sizes", default="317,1024", help="crafted notebook sizes in KB, comma-separated")
    parser.add_argument("--cpu-cap", type=int, default=600, help="CPU seconds per file before giving up")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder, code = Path(scratch), ROOT
        if args.rev:
            code = folder / "code"  # the revision's files, exported (the repository is left as it is)
            code.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(code)], input=archive.stdout, check=True)
        files = {}
        for size in (int(kb) for kb in args.sizes.split(",")):
            path = folder / f"crafted-{size}k.ipynb"
            path.write_text(crafted_notebook(size * 1024))
            files[f'crafted `!echo "(` lines, {path.stat().st_size:,} bytes'] = path
        if not args.rev:
            for name, cells in SHAPES.items():
                path = folder / f"{len(files)}.ipynb"
                path.write_text(notebook(*cells))
                files[f"{name}, {path.stat().st_size:,} bytes"] = path
        for label, path in files.items():
            print(f"{label}: {cpu_seconds(code, path, args.cpu_cap)}", flush=True)


def cpu_seconds(code: Path, path: Path, cap: int) -> str:
    """The loader's CPU seconds on one file, in a fresh process limited to `cap` CPU seconds."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 5))

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", TIMER, str(code), str(path)], capture_output=True, text=True, preexec_fn=limit
    )
    if done.returncode != 0:
        return f"over the {cap} s CPU cap (stopped after {time.monotonic() - started:.0f} s wall)"
    return f"{float(done.stdout.strip()):.2f} s CPU"


if __name__ == "__main__":
    main()
