"""Grade an assignment's soundness corpus and print mutation score, precision, containment,
the degenerate answers' points against their caps, and timing; --public measures the public checks.

Part 2 (transformer_mt, the default): tests/soundness/. Part 1 (--assignment attention_encoder):
tests/assignments/attention_encoder/fixtures/cases.yaml, each case written out as a .py submission.
Both go through the engine's batch grading (sandboxed workers), as the CLI does.

Usage: python bench/soundness.py [--assignment NAME] [--jobs 2] [--timeout 10] [--only ID_OR_KIND ...] [--out DIR]
       python bench/soundness.py --public   # public checks: held-out bugs caught, false fails
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PART1_TESTS = ROOT / "tests" / "assignments" / "attention_encoder"
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "soundness"), str(PART1_TESTS)]

import ae_corpus  # noqa: E402
from soundness_grading import CORPUS_JOBS, CORPUS_TIMEOUT_S, CorpusRun, figures, grade_corpus, result_summary  # noqa: E402
from soundness_spec import CORPUS_DIR, Case, Expectation, load_cases  # noqa: E402

DEFAULT_ASSIGNMENT = "transformer_mt"
PART1 = "attention_encoder"
TRAINING = "training"

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


def part1_cases(folder: Path) -> list[Case]:
    """Part 1's corpus (fixtures/cases.yaml) as gradable cases, each submission written to `folder`.

    Args:
        folder: where the `<id>.py` submissions go (the correct code with the fixture appended).

    Returns:
        The cases in file order, judged against Part 1's unit parts.
    """
    from autograder.assignment import load_assignment

    parts = load_assignment(PART1).parts
    unit_parts = tuple(name for name in parts if name != TRAINING)
    cases = []
    for raw in ae_corpus.load_cases():
        submission = folder / f"{raw.id}.py"
        submission.write_text(raw.source(), encoding="utf-8")
        expect = Expectation(
            max_points=raw.max_points,
            # A fault may also cost the training part; the corpus grades it only for cheats.
            affected=tuple(part for part in raw.affected if part in unit_parts),
            cap=raw.cap,
        )
        cases.append(Case(raw.id, raw.kind, raw.tag, raw.description, (), {}, expect, unit_parts, submission))
    return cases


def grade_part1(
    cases: list[Case], jobs: int, timeout_s: float, out_dir: Path | None, extra: dict[str, Any] | None = None
) -> CorpusRun:
    """Grade Part 1's cases; those that cheat on the training part are graded with training on.

    Args:
        cases: from `part1_cases`.
        jobs: submissions graded in parallel.
        timeout_s: the worker request timeout.
        out_dir: the report folder (default: a temporary one).
        extra: more configuration overrides (e.g. the feedback language).

    Returns:
        One run with every case's result.
    """
    overrides: dict[str, Any] = {"assignment.name": PART1, **(extra or {})}
    trained = [case for case in cases if TRAINING in case.expect.max_points]
    groups = [([c for c in cases if c not in trained], overrides), (trained, {**overrides, "training.enabled": True})]
    run: CorpusRun | None = None
    for group, group_overrides in (g for g in groups if g[0]):
        folder = out_dir if run is None else run.out_dir / TRAINING  # one report folder per configuration
        graded = grade_corpus(group, jobs, timeout_s, folder, group_overrides)
        if run is None:
            run = graded
            continue
        run.results.update(graded.results)
        run.stems.update(graded.stems)
        run.planted_files += graded.planted_files
        run.report_mismatches += graded.report_mismatches
        run.seconds += graded.seconds
    assert run is not None, "no case to grade"
    run.cases = cases
    return run


def main(argv: list[str]) -> int:
    """Grade the corpus and print the figures.

    Args:
        argv: command-line arguments after the program name.

    Returns:
        0 when every case behaved as its spec says, 1 otherwise.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--assignment",
        choices=(DEFAULT_ASSIGNMENT, PART1),
        default=DEFAULT_ASSIGNMENT,
        help="whose corpus to grade (default: transformer_mt, tests/soundness)",
    )
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
    if args.public and args.assignment != DEFAULT_ASSIGNMENT:
        parser.error("--public measures Part 2's public checks only")
    folder = Path(tempfile.mkdtemp(prefix="soundness-part1-"))
    cases = part1_cases(folder) if args.assignment == PART1 else load_cases()
    if args.only:
        cases = [c for c in cases if c.id in args.only or c.kind in args.only]
        if not cases:
            parser.error("no case matches --only")
    if args.assignment == PART1:
        run = grade_part1(cases, jobs=args.jobs, timeout_s=args.timeout, out_dir=args.out)
    else:
        run = grade_corpus(cases, jobs=args.jobs, timeout_s=args.timeout, out_dir=args.out)
    summary = figures(run)
    if args.verbose:
        for case in cases:
            result = run.results[case.id]
            print(f"{case.kind:11} {case.id:42} {result.grading_seconds:5.1f} s  {result_summary(result)}")
        print()
    print(
        f"soundness corpus of {args.assignment} (jobs={args.jobs}, worker timeout {args.timeout:g} s, "
        f"reports in {run.out_dir})"
    )
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
