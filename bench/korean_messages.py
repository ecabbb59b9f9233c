"""Grade notebooks in Korean and count the student-facing messages that carry no Korean outside quoted code.

Default: the 8 held-out bug notebooks of the public checks (tests/fixtures/public_checks) and two
corpus cheats, graded as Part 2. `--corpus` grades both assignments' whole soundness corpus instead.

Usage: python bench/korean_messages.py [--corpus] [--jobs 2] [--list]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "soundness")]

from hangul import student_texts, untranslated  # noqa: E402
from soundness import grade_part1, part1_cases  # noqa: E402
from soundness_grading import CORPUS_JOBS, CORPUS_TIMEOUT_S, grade_corpus  # noqa: E402
from soundness_spec import load_cases  # noqa: E402

from autograder.results import SubmissionResult  # noqa: E402

HELD_OUT = ROOT / "tests" / "fixtures" / "public_checks"
CHEATS = ("cheat_lying_tensor", "cheat_hardcoded_mask")
KOREAN = {"feedback.language": "ko"}


def _held_out(jobs: int) -> list[SubmissionResult]:
    from soundness_grading import corpus_config

    from autograder.assignment import assignment_of
    from autograder.batch import expand_paths, grade_all
    from autograder.engine import grade_submission

    cheats = [case for case in load_cases() if case.id in CHEATS]
    paths = sorted(HELD_OUT.glob("bug_*.ipynb")) + [case.path for case in cheats]
    config = corpus_config(overrides=KOREAN)
    grade = partial(grade_submission, assignment=assignment_of(config))
    return grade_all(expand_paths(paths), config, grade, jobs=jobs)


def _corpus(jobs: int) -> list[SubmissionResult]:
    part2 = grade_corpus(load_cases(), jobs, CORPUS_TIMEOUT_S, overrides=KOREAN)
    cases = part1_cases(Path(tempfile.mkdtemp(prefix="korean-part1-")))
    part1 = grade_part1(cases, jobs, CORPUS_TIMEOUT_S, None, extra=KOREAN)
    return list(part2.results.values()) + list(part1.results.values())


def main(argv: list[str]) -> int:
    """Grade, count and print.

    Args:
        argv: command-line arguments after the program name.

    Returns:
        0 when every message has Korean, 1 otherwise.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="store_true", help="grade both assignments' whole soundness corpus")
    parser.add_argument("--jobs", type=int, default=CORPUS_JOBS, help="notebooks graded in parallel")
    parser.add_argument("--list", action="store_true", help="print every message without Korean")
    args = parser.parse_args(argv)
    results = _corpus(args.jobs) if args.corpus else _held_out(args.jobs)
    total = sum(len(student_texts(result)) for result in results)
    missing = untranslated(results)
    print(f"{len(results)} submissions graded in ko: {len(missing)} of {total} student-facing messages without Korean")
    if args.list:
        for text in missing:
            print(f"- {text}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
