"""Benchmark: HTML feedback pages with both of Part 2's pictures, this checkout against another commit, in turns.

Each round renders `--pages` pages (the test fixtures' partial result with a buggy mask and a training
history) in a fresh process of each side (the other commit as a detached `git worktree` in a temporary
folder, this interpreter, that side's code first on PYTHONPATH); the sides alternate which goes first.
Reported per round: each side's CPU seconds per page (the child's user + system, imports excluded) and
the ratio this/other; then the median ratio.

Usage: python bench/feedback_pages.py --vs HEAD~1 [--rounds 3] [--pages 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: also when imported, not run as a script
from worktree import detached_worktree

REPO_ROOT = Path(__file__).resolve().parents[1]
# Run inside each side's checkout: import, then time only the rendering (process CPU, all threads).
RENDER = """
import json, sys, time
from pathlib import Path
from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.reports.html import render_html
from autograder.reports.submission_json import read_submission_json
fixtures, pages = Path("tests/fixtures"), int(sys.argv[1])
result = read_submission_json(fixtures / "results" / "partial.json")
for key, name in (("attention_mask", "mask_triu.json"), ("training", "training_history.json")):
    result.extras[key] = json.loads((fixtures / "integrations" / name).read_text())
parts = load_config(fixtures / "results" / "grader.yml").parts
view = load_assignment("transformer_mt").report_sections
render_html(result, parts, "Course", view)  # first use: lazy imports, not counted
start = time.process_time()
for _ in range(pages):
    render_html(result, parts, "Course", view)
print(json.dumps({"cpu_s_per_page": (time.process_time() - start) / pages}))
"""


def render_pages(root: Path, pages: int) -> float:
    """CPU seconds per page of one side, in a fresh process.

    Args:
        root: the checkout whose code renders.
        pages: pages to render after the first.

    Returns:
        CPU seconds per page.
    """
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(pages)], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu_s_per_page"])


def main() -> int:
    """Alternate the two sides for `--rounds` rounds and print the per-page CPU and the ratios.

    Returns:
        0.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vs", required=True, help="the other commit (any git revision)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    with detached_worktree(args.vs) as other:
        ratios = []
        for round_ in range(args.rounds):
            order = [("this", REPO_ROOT), ("other", other)]
            figures = dict((side, render_pages(root, args.pages)) for side, root in order[:: 1 - 2 * (round_ % 2)])
            ratios.append(figures["this"] / figures["other"])
            print(
                f"round {round_ + 1}: this {figures['this'] * 1000:.1f} ms/page, other ({args.vs}) "
                f"{figures['other'] * 1000:.1f} ms/page, ratio {ratios[-1]:.4f}  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        print(f"median ratio this/other: {statistics.median(ratios):.4f} over {args.rounds} rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
