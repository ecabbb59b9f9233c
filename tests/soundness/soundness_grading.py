"""Grade the soundness corpus through the real engine (sandboxed workers, batch API) and judge each case."""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from soundness_spec import DEGENERATE_CAPS, KINDS, Case, load_cases

from autograder.assignment import assignment_of
from autograder.batch import expand_paths, grade_all
from autograder.config import PROJECT_ROOT, GraderConfig, load_config
from autograder.engine import grade_submission
from autograder.reports.files import write_reports
from autograder.reports.submission_json import submission_json
from autograder.results import STATUS_ERROR, SubmissionResult

# Fault cases hang on purpose: a shorter request timeout keeps the corpus run short. Normal
# requests of the unit checks take well under a second.
CORPUS_TIMEOUT_S = 10
CORPUS_JOBS = 2
CORPUS_LANGUAGE = "ko"
# Names the corpus's cheats give the files they try to plant outside their sandbox, and the text
# they write into every forged file (a file elsewhere may change for other reasons, e.g. a
# concurrent `make grade-examples`, and is only counted when it carries that text).
FORGED_MARKERS = ("soundness-forged",)
FORGED_TEXT = b"SOUNDNESS-FORGED"
# Places a forged report would be looked for: Gradescope's result file and the default report
# folder, relative to the grader's working directory and to the project.
_REPORT_PLACES = ("results.json", "grading-output/results.json", "grading-output/gradebook.csv")


@dataclass
class Judgement:
    """Whether a case's grading shows what the spec expects."""

    case: Case
    problems: list[str] = field(default_factory=list)  # empty: as expected
    caught: bool = False  # mutants: lost points on the tagged part
    precise: bool = False  # mutants: lost points on the tagged part only

    @property
    def ok(self) -> bool:
        """True when grading matched every expectation."""
        return not self.problems


@dataclass
class CorpusRun:
    """The corpus graded once: results by case id, the reports written, and timing."""

    cases: list[Case]
    results: dict[str, SubmissionResult]
    config: GraderConfig
    out_dir: Path
    stems: dict[str, str]
    seconds: float
    planted_files: list[str]  # forged files found outside the workers after grading
    report_mismatches: list[str]  # reports that differ from the engine's results


def corpus_config(timeout_s: float = CORPUS_TIMEOUT_S, overrides: dict[str, Any] | None = None) -> GraderConfig:
    """The project's configuration with the corpus run's worker timeout.

    Args:
        timeout_s: seconds per worker request (and per statement at load time).
        overrides: more dotted-key overrides (e.g. the graded assignment, training on).

    Returns:
        The validated configuration.
    """
    return load_config(
        overrides={
            "worker.timeout_s": timeout_s,
            "training.enabled": False,
            # the course's language: the Korean-messages test reads this run's results and reports
            # (the cases' expected reasons match the Korean text or the code it quotes)
            "feedback.language": CORPUS_LANGUAGE,
            **(overrides or {}),
        }
    )


def _watched_paths(cases: list[Case]) -> list[Path]:
    paths = {Path(p) for case in cases for p in case.expect.forged_paths}
    paths |= {root / place for root in (PROJECT_ROOT, Path.cwd()) for place in _REPORT_PLACES}
    paths.add(Path("/autograder/results/results.json"))
    return sorted(paths)


def _snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    state: dict[Path, bytes | None] = {}
    for path in paths:
        try:
            state[path] = path.read_bytes()
        except OSError:
            state[path] = None
    return state


def _forged_names(folders: list[Path]) -> set[Path]:
    found = set()
    for folder in folders:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        found |= {entry for entry in entries if any(m.lower() in entry.name.lower() for m in FORGED_MARKERS)}
    return found


@contextlib.contextmanager
def _one_thread_per_job() -> Iterator[None]:
    """Let the batch's grading processes (spawned now) use one passive OpenMP thread each.

    The checks' own tensors are tiny; with two grading processes on two cores, two spinning
    OpenMP threads per process made the trusted side of a grading about four times slower.
    Variables already set by the caller (e.g. the Makefile's OMP_WAIT_POLICY) are kept.
    """
    wanted = {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    added = [key for key in wanted if key not in os.environ]
    os.environ.update({key: wanted[key] for key in added})
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def grade_corpus(
    cases: list[Case] | None = None,
    jobs: int = CORPUS_JOBS,
    timeout_s: float = CORPUS_TIMEOUT_S,
    out_dir: Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> CorpusRun:
    """Grade every corpus notebook with the batch API and write the reports.

    Args:
        cases: the cases (default: all of cases.yaml).
        jobs: submissions graded in parallel.
        timeout_s: the worker request timeout for this run.
        out_dir: where the reports go (default: a new temporary folder).
        overrides: more configuration overrides (see `corpus_config`).

    Returns:
        The run, with the forged files and report mismatches it found.
    """
    cases = load_cases() if cases is None else cases
    config = corpus_config(timeout_s, overrides)
    assignment = assignment_of(config)  # Part 2's, or Part 1's when the overrides name it
    out_dir = Path(tempfile.mkdtemp(prefix="soundness-reports-")) if out_dir is None else out_dir
    submissions = expand_paths([case.path for case in cases])
    watched = _watched_paths(cases)
    folders = [Path(tempfile.gettempdir()), PROJECT_ROOT, PROJECT_ROOT / "grading-output", Path.cwd()]
    before, names_before = _snapshot(watched), _forged_names(folders)
    started = time.perf_counter()
    with _one_thread_per_job():
        results = grade_all(submissions, config, partial(grade_submission, assignment=assignment), jobs=jobs)
    seconds = time.perf_counter() - started
    planted = planted_files(before, _snapshot(watched), names_before, _forged_names(folders))
    stems = {case.id: submission.stem for case, submission in zip(cases, submissions, strict=True)}
    write_reports(results, [s.stem for s in submissions], config, assignment, out_dir)
    by_id = {case.id: result for case, result in zip(cases, results, strict=True)}
    mismatches = report_mismatches(out_dir, {stems[case_id]: result for case_id, result in by_id.items()})
    return CorpusRun(cases, by_id, config, out_dir, stems, seconds, planted, mismatches)


def planted_files(
    before: dict[Path, bytes | None], after: dict[Path, bytes | None], names_before: set[Path], names_after: set[Path]
) -> list[str]:
    """Files a submission managed to plant outside its sandbox.

    Args:
        before: watched path -> content (None: absent) before grading.
        after: the same after grading.
        names_before: files with a forged-looking name in the scanned folders before grading.
        names_after: the same after grading.

    Returns:
        The watched paths that now carry the forged text, and the new forged-looking names.
    """
    planted = [
        str(path)
        for path, content in after.items()
        if content is not None and FORGED_TEXT in content and content != before.get(path)
    ]
    return planted + [str(path) for path in sorted(names_after - names_before)]


def report_mismatches(out_dir: Path, results: dict[str, SubmissionResult]) -> list[str]:
    """Reports in a folder that differ from the engine's results, and files nobody wrote.

    Args:
        out_dir: the report folder written by `write_reports`.
        results: report stem -> the result it must render.

    Returns:
        One description per problem (empty when every report is what the engine produced).
    """
    problems = []
    for stem, result in results.items():
        written = out_dir / f"{stem}.json"
        if not written.is_file() or written.read_text(encoding="utf-8") != submission_json(result):
            problems.append(f"{written.name} differs from the graded result")
    expected = {f"{stem}{suffix}" for stem in results for suffix in (".json", ".results.json", ".md")}
    expected |= {"gradebook.csv", "summary.md"}
    problems += [f"unexpected file {path.name}" for path in out_dir.iterdir() if path.name not in expected]
    return problems


def _points(result: SubmissionResult) -> dict[str, tuple[float, float]]:
    return {part.part: (part.points, part.max_points) for part in result.parts}


def _messages(result: SubmissionResult, part: str) -> str:
    return "\n".join(m for p in result.parts if p.part == part for m in p.messages)


def judge(case: Case, result: SubmissionResult, run: CorpusRun | None = None) -> Judgement:
    """Compare one case's grading with what its spec expects.

    Args:
        case: the case.
        result: its grading result.
        run: the whole run (for forged files); None skips that check.

    Returns:
        The judgement, listing every unmet expectation.
    """
    verdict = Judgement(case)
    problems = verdict.problems
    points = _points(result)
    if result.status != case.expect.status:
        problems.append(
            f"status {result.status!r}, expected {case.expect.status!r}"
            + (f" ({'; '.join(result.notes)})" if result.status == STATUS_ERROR else "")
        )
    internal = result.extras.get("internal_errors")
    if internal:
        problems.append(f"grader-side errors: {internal}")
    missing = [p for p in case.unit_parts if p not in points]
    if missing:
        problems.append(f"parts missing from the result: {missing}")
        return verdict
    for part in case.full_parts():
        got, full = points[part]
        if got != full:
            problems.append(f"{part} got {got:g}/{full:g} but must keep full marks ({_messages(result, part)[:300]!r})")
    if case.kind == "mutant":
        assert case.tag is not None, case.id  # mutants and degenerate cases name their part
        got, full = points[case.tag]
        verdict.caught = got < full
        verdict.precise = verdict.caught and all(points[p][0] == points[p][1] for p in case.full_parts())
        if not verdict.caught:
            problems.append(f"not caught: {case.tag} got full marks ({got:g}/{full:g})")
    elif case.kind == "degenerate":
        assert case.tag is not None, case.id
        got, full = points[case.tag]
        cap = degenerate_cap(case, full)
        if got > cap + 1e-9:
            passed = [c.check_id for p in result.parts if p.part == case.tag for c in p.checks if c.passed]
            problems.append(
                f"{case.tag} got {got:g}/{full:g} points, at most {cap:g} allowed for an "
                f"answer that does no work (passed: {', '.join(passed)})"
            )
    elif case.kind == "cheat":
        failed = {c.check_id for p in result.parts for c in p.checks if not c.passed}
        for part, cap in case.expect.max_points.items():
            if points[part][0] > cap:
                problems.append(f"{part} got {points[part][0]:g} points, at most {cap:g} allowed")
        for check in case.expect.must_fail:
            if check not in failed:
                problems.append(f"check {check} passed")
        if run is not None and run.planted_files:
            problems.append(f"forged files appeared: {run.planted_files}")
    elif case.kind == "fault":
        for part in case.expect.affected:
            if points[part][0] >= points[part][1]:
                problems.append(f"{part} kept full marks although the fault breaks it")
            text = _messages(result, part) + "\n" + "\n".join(result.load_problems)
            if not re.search(case.expect.reason, text, re.IGNORECASE):
                problems.append(
                    f"{part}: no message matches {case.expect.reason!r} (messages: {_messages(result, part)[:300]!r})"
                )
        if case.expect.load_problem and not re.search(
            case.expect.load_problem, "\n".join(result.load_problems), re.IGNORECASE
        ):
            problems.append(
                f"no load problem matches {case.expect.load_problem!r} "
                f"(load problems: {[p[:200] for p in result.load_problems]})"
            )
    return verdict


def degenerate_cap(case: Case, full: float) -> float:
    """The most points a degenerate answer may keep on its part.

    Args:
        case: a degenerate case.
        full: its part's points.

    Returns:
        The case's share (its own cap, else DEGENERATE_CAPS') of the part's points.
    """
    assert case.tag is not None, case.id
    share = case.expect.cap if case.expect.cap is not None else DEGENERATE_CAPS[case.tag]
    return share * full


@dataclass
class Figures:
    """The corpus's headline numbers."""

    counts: dict[str, int]
    mutants_caught: int
    mutants_precise: int
    alternatives_false_failed: list[str]
    cheats_contained: int
    faults_contained: int
    degenerate_within: int  # degenerate answers within their cap, full elsewhere
    # part -> (cases, highest points of a degenerate answer, mean points, cap, part's points)
    degenerate: dict[str, tuple[int, float, float, float, float]]
    failures: dict[str, list[str]]  # case id -> problems
    seconds: float
    per_notebook: dict[str, Any]  # mean, median, max (and its case) of grading_seconds
    per_kind: dict[str, float]  # mean grading_seconds per kind

    def lines(self) -> list[str]:
        """The figures as printable lines."""
        n = self.counts
        mutants = n["mutant"] or 1
        per = self.per_notebook
        return [
            f"corpus: {sum(n.values())} notebooks ({', '.join(f'{n[k]} {k}s' for k in KINDS)})",
            f"mutation score: {self.mutants_caught}/{n['mutant']} = {self.mutants_caught / mutants:.1%} "
            "(mutants that lose points on their tagged part)",
            f"precision:      {self.mutants_precise}/{n['mutant']} = {self.mutants_precise / mutants:.1%} "
            "(mutants that lose points only on their tagged part)",
            f"false fails among alternatives: {len(self.alternatives_false_failed)}/{n['alternative']}"
            + (f" ({', '.join(self.alternatives_false_failed)})" if self.alternatives_false_failed else ""),
            f"cheats contained: {self.cheats_contained}/{n['cheat']}",
            f"faults contained: {self.faults_contained}/{n['fault']}",
            f"degenerate answers within the caps: {self.degenerate_within}/{n['degenerate']}",
            *(
                f"  {part:20} {count} answers: max {top:g}, mean {mean:.2f} of {full:g} points "
                f"(cap {cap:g} = {cap / full:.0%})"
                for part, (count, top, mean, cap, full) in self.degenerate.items()
            ),
            f"total grading time: {self.seconds:.1f} s (wall, the whole batch)",
            f"per notebook: mean {per['mean']:.1f} s, median {per['median']:.1f} s, max {per['max']:.1f} s "
            f"({per['max_case']}); by kind: "
            + ", ".join(f"{kind} {seconds:.1f} s" for kind, seconds in self.per_kind.items()),
        ]


def figures(run: CorpusRun) -> Figures:
    """Judge every case of a run and summarise.

    Args:
        run: the graded corpus.

    Returns:
        The figures (and every failed expectation, by case).
    """
    judgements = [judge(case, run.results[case.id], run) for case in run.cases]
    by_kind = {kind: [j for j in judgements if j.case.kind == kind] for kind in KINDS}
    times = {case.id: run.results[case.id].grading_seconds for case in run.cases}
    slowest = max(times, key=lambda case_id: times[case_id])
    failures = {j.case.id: j.problems for j in judgements if j.problems}
    if run.report_mismatches:
        failures["(reports)"] = [f"report differs from the result: {m}" for m in run.report_mismatches]
    return Figures(
        counts={kind: len(items) for kind, items in by_kind.items()},
        mutants_caught=sum(j.caught for j in by_kind["mutant"]),
        mutants_precise=sum(j.precise for j in by_kind["mutant"]),
        alternatives_false_failed=[j.case.id for j in by_kind["alternative"] if not j.ok],
        cheats_contained=sum(j.ok for j in by_kind["cheat"]),
        faults_contained=sum(j.ok for j in by_kind["fault"]),
        degenerate_within=sum(j.ok for j in by_kind["degenerate"]),
        degenerate=_degenerate_points(run, by_kind["degenerate"]),
        failures=failures,
        seconds=run.seconds,
        per_notebook={
            "mean": statistics.mean(times.values()),
            "median": statistics.median(times.values()),
            "max": times[slowest],
            "max_case": slowest,
        },
        per_kind={kind: statistics.mean(times[j.case.id] for j in items) for kind, items in by_kind.items() if items},
    )


def _degenerate_points(
    run: CorpusRun, judgements: list[Judgement]
) -> dict[str, tuple[int, float, float, float, float]]:
    table = {}
    for part in dict.fromkeys(p for j in judgements for p in j.case.unit_parts):
        tagged = [j.case for j in judgements if j.case.tag == part]
        scored = [_points(run.results[case.id])[part] for case in tagged]
        if scored:
            full = scored[0][1]
            got = [points for points, _ in scored]
            table[part] = (len(got), max(got), statistics.mean(got), degenerate_cap(tagged[0], full), full)
    return table


def result_summary(result: SubmissionResult) -> str:
    """One line per part with points, for failure messages and debugging."""
    return json.dumps({p.part: f"{p.points:g}/{p.max_points:g}" for p in result.parts})
