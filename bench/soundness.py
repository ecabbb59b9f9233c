"""Grade the soundness corpus (tests/soundness/) and print mutation score, precision, containment,
the degenerate answers' points against their caps, and timing; --public measures the public checks.

Usage: python bench/soundness.py [--jobs 2] [--timeout 10] [--only ID_OR_KIND ...] [--out DIR]
       python bench/soundness.py --public   # public checks: held-out bugs caught, false fails
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "soundness")]

from soundness_grading import CORPUS_JOBS, CORPUS_TIMEOUT_S, figures, grade_corpus, result_summary  # noqa: E402
from soundness_spec import CORPUS_DIR, load_cases  # noqa: E402

PUBLIC_FIXTURES = ROOT / "tests" / "fixtures" / "public_checks"
PUBLIC_TESTS = ROOT / "student_template" / "tests"


def public_figures() -> int:
    """Run the public checks on the held-out notebooks and on the corpus's correct notebooks.

    Returns:
        0 when at least 7 of the 8 held-out bugs fail their own check and no correct notebook
        fails any check, 1 otherwise.
    """
    import time

    import yaml

    from autograder.integrations.public_checks import run_public_checks

    def failed_checks(path: Path) -> list[str]:
        outcomes, _problems = run_public_checks(path, PUBLIC_TESTS)
        return sorted(o.name for o in outcomes if not o.passed)

    started = time.perf_counter()
    held_out = yaml.safe_load((PUBLIC_FIXTURES / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    caught, precise, false_fails, correct = 0, 0, [], 0
    for case in held_out:
        failed = failed_checks(PUBLIC_FIXTURES / f"{case['id']}.ipynb")
        if case["expect"]:
            caught += case["expect"] in failed
            precise += failed == [case["expect"]]
            print(f"  bug     {case['id']:42} expect {case['expect']}  failed {failed or '-'}")
        else:
            correct += 1
            false_fails += [f"{case['id']}: {failed}"] if failed else []
            print(f"  correct {case['id']:42} ({case['base']} format)  failed {failed or '-'}")
    alternatives = [c for c in load_cases() if c.kind == "alternative"]
    for case in alternatives:
        failed = failed_checks(CORPUS_DIR / f"{case.id}.ipynb")
        false_fails += [f"{case.id}: {failed}"] if failed else []
    bugs = sum(1 for case in held_out if case["expect"])
    print(
        f"public checks: {caught}/{bugs} held-out common bugs fail their own check "
        f"({precise}/{bugs} fail only that check)"
    )
    print(
        f"false fails: {len(false_fails)} among {correct} held-out correct notebooks (both formats) "
        f"and {len(alternatives)} alternative-correct corpus notebooks" + (f": {false_fails}" if false_fails else "")
    )
    print(f"time: {time.perf_counter() - started:.1f} s")
    return 0 if caught >= 7 and not false_fails else 1


def main(argv: list[str]) -> int:
    """Grade the corpus and print the figures.

    Args:
        argv: command-line arguments after the program name.

    Returns:
        0 when every case behaved as its spec says, 1 otherwise.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=CORPUS_JOBS, help="notebooks graded in parallel")
    parser.add_argument(
        "--timeout", type=float, default=CORPUS_TIMEOUT_S, help="worker request timeout in seconds (worker.timeout_s)"
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        metavar="ID_OR_KIND",
        help="grade only these case ids or kinds (mutant, alternative, cheat, fault, degenerate)",
    )
    parser.add_argument("--out", type=Path, default=None, help="report folder (default: a temporary one)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every case's points")
    parser.add_argument(
        "--public", action="store_true", help="measure the public checks (student_template/tests) instead of grading"
    )
    args = parser.parse_args(argv)
    if args.public:
        return public_figures()
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
