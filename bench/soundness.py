"""Grade the soundness corpus (tests/soundness/) and print mutation score, precision, containment and timing.

Usage: python bench/soundness.py [--jobs 2] [--timeout 10] [--only ID_OR_KIND ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "soundness")]

from soundness_grading import (CORPUS_JOBS, CORPUS_TIMEOUT_S, figures, grade_corpus,  # noqa: E402
                               result_summary)
from soundness_spec import load_cases  # noqa: E402


def main(argv: list[str]) -> int:
    """Grade the corpus and print the figures.

    Args:
        argv: command-line arguments after the program name.

    Returns:
        0 when every case behaved as its spec says, 1 otherwise.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=CORPUS_JOBS, help="notebooks graded in parallel")
    parser.add_argument("--timeout", type=float, default=CORPUS_TIMEOUT_S,
                        help="worker request timeout in seconds (worker.timeout_s)")
    parser.add_argument("--only", nargs="*", default=None, metavar="ID_OR_KIND",
                        help="grade only these case ids or kinds (mutant, alternative, cheat, fault)")
    parser.add_argument("--out", type=Path, default=None, help="report folder (default: a temporary one)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every case's points")
    args = parser.parse_args(argv)
    cases = load_cases()
    if args.only:
        cases = [c for c in cases if c.id in args.only or c.kind in args.only]
        if not cases:
            parser.error("no case matches --only")
    run = grade_corpus(cases, jobs=args.jobs, timeout_s=args.timeout, out_dir=args.out)
    summary = figures(run)
    if args.verbose:
        for case in cases:
            result = run.results[case.id]
            print(f"{case.kind:11} {case.id:42} {result.grading_seconds:5.1f} s  {result_summary(result)}")
        print()
    print(f"soundness corpus (jobs={args.jobs}, worker timeout {args.timeout:g} s, reports in {run.out_dir})")
    for line in summary.lines():
        print("  " + line)
    if summary.failures:
        print("unexpected outcomes:")
        for case_id, problems in summary.failures.items():
            for problem in problems:
                print(f"  {case_id}: {problem}")
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
