"""Golden per-check scores of Part 2 on the soundness corpus and the examples: regenerate, compare.

The committed file `golden_scores.json` holds, for every corpus notebook (by case id) and every
example notebook (`examples/<name>`), the grading status and the points of each part and check.
It was produced by the engine before the assignment-folder refactor; an end-to-end test
(`test_golden_scores.py`) grades the same notebooks with the current engine and reports every
notebook and check whose points moved. Refresh the file only deliberately, when a change of the
scores is intended (and say so in the commit):

    python tests/soundness/golden_scores.py --write   # grade everything (minutes), rewrite the file
    python tests/soundness/golden_scores.py --check   # grade everything, print the differences
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script: the sibling helper modules are not a package
    sys.path.insert(0, str(HERE))

from soundness_grading import CORPUS_JOBS, corpus_config, grade_corpus  # noqa: E402

from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import expand_paths, grade_all  # noqa: E402
from autograder.engine import grade_submission as engine_grade_submission  # noqa: E402
from autograder.results import SubmissionResult  # noqa: E402

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

GOLDEN_FILE = HERE / "golden_scores.json"
EXAMPLES_DIR = HERE.parents[1] / "examples"
# The examples load the whole course notebook (data, tokenisers, the given modules): a longer
# per-request timeout than the corpus run's keeps a loaded machine from turning into lost points.
EXAMPLES_TIMEOUT_S = 120.0

Scores = dict[str, Any]  # {"status": str, "parts": {part: points}, "checks": {check_id: points}}


def scores(result: SubmissionResult) -> Scores:
    """The comparable part of a grading: status, part totals and each check's points.

    Args:
        result: one submission's result.

    Returns:
        A JSON-ready dictionary with sorted keys.
    """
    return {
        "status": result.status,
        "parts": {part.part: part.points for part in sorted(result.parts, key=lambda p: p.part)},
        "checks": dict(sorted((check.check_id, check.points) for part in result.parts for check in part.checks)),
    }


def example_paths() -> list[Path]:
    """The example submissions (`examples/*.ipynb`), sorted."""
    return sorted(EXAMPLES_DIR.glob("*.ipynb"))


def example_key(path: Path) -> str:
    """The golden file's key for an example notebook."""
    return f"examples/{path.name}"


def grade_examples(jobs: int = CORPUS_JOBS) -> dict[str, SubmissionResult]:
    """Grade the example notebooks with the corpus run's configuration (training off, English).

    Args:
        jobs: submissions graded in parallel.

    Returns:
        Golden key -> result.
    """
    paths = example_paths()
    results = grade_all(expand_paths(paths), corpus_config(EXAMPLES_TIMEOUT_S), grade_submission, jobs=jobs)
    return {example_key(path): result for path, result in zip(paths, results, strict=True)}


def score_table(results: dict[str, SubmissionResult]) -> dict[str, Scores]:
    """Scores of many results, sorted by key.

    Args:
        results: golden key -> result.

    Returns:
        Golden key -> scores.
    """
    return {key: scores(results[key]) for key in sorted(results)}


def load_golden(path: Path = GOLDEN_FILE) -> dict[str, Scores]:
    """The committed golden scores.

    Args:
        path: the golden file.

    Returns:
        Golden key -> scores.
    """
    table: dict[str, Scores] = json.loads(path.read_text(encoding="utf-8"))
    return table


def differences(golden: dict[str, Scores], current: dict[str, Scores]) -> list[str]:
    """Every notebook, part and check whose status or points differ between two tables.

    Args:
        golden: the expected scores.
        current: the scores just measured.

    Returns:
        One line per difference (empty when the tables agree).
    """
    lines = [f"{key}: not graded now" for key in sorted(set(golden) - set(current))]
    lines += [f"{key}: not in the golden file" for key in sorted(set(current) - set(golden))]
    for key in sorted(set(golden) & set(current)):
        old, new = golden[key], current[key]
        if old["status"] != new["status"]:
            lines.append(f"{key}: status {old['status']!r} -> {new['status']!r}")
        for field in ("parts", "checks"):
            for name in sorted(set(old[field]) | set(new[field])):
                before, after = old[field].get(name), new[field].get(name)
                if before != after:
                    lines.append(f"{key}: {field[:-1]} {name} {before} -> {after}")
    return lines


def grade_everything() -> dict[str, Scores]:
    """Grade the whole corpus and the examples with the engine on the import path.

    Returns:
        Golden key -> scores.
    """
    results: dict[str, SubmissionResult] = dict(grade_corpus().results)
    results.update(grade_examples())
    return score_table(results)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the golden file (`--write`) or print how the current engine differs (`--check`).

    Args:
        argv: command-line arguments (default: sys.argv).

    Returns:
        The exit status: 1 when `--check` finds differences.
    """
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="grade everything and rewrite the golden file")
    mode.add_argument("--check", action="store_true", help="grade everything and list the differences")
    parser.add_argument("--out", type=Path, default=GOLDEN_FILE, help="the golden file (default: %(default)s)")
    args = parser.parse_args(argv)
    table = grade_everything()
    if args.write:
        args.out.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        checks = sum(len(entry["checks"]) for entry in table.values())
        print(f"wrote {args.out}: {len(table)} notebooks, {checks} checks")
        return 0
    found = differences(load_golden(args.out), table)
    print("\n".join(found) if found else f"no differences on {len(table)} notebooks")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
