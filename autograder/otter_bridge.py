"""Otter plugin that grades a submission with this project's engine, in separate processes per part."""

# How it runs (see docs/OTTER.md): Otter's runner calls `before_execution`, where the student's
# notebook is swapped for an empty one, so Otter's kernel never executes student code; then
# `after_grading`, where `python -m autograder grade` runs on the untouched submission file in a
# child process with a timeout, and its per-part results replace Otter's (empty) test results.
# The unit parts first run together under the sum of their timeouts; if that run fails or times
# out, each part is graded again in its own process under its own timeout, so a hang costs only
# the part it happens in. The training part, when enabled, always gets its own process.

from __future__ import annotations

import copyreg
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from otter.plugins import AbstractOtterPlugin
from otter.test_files import GradingResults
from otter.test_files.abstract_test import TestCase, TestCaseResult
from otter.test_files.ok_test import OKTestFile

from autograder.assignment import assignment_of, bundled_data_of
from autograder.config import GraderConfig, PartConfig, load_config
from autograder.i18n import FALLBACK, assignment_title, part_title, t, use_language
from autograder.integrations.otter_compat import ENGINE_PLUGIN
from autograder.integrations.otter_upload import (
    Quarantine,
    blank_notebook_bytes,
    prepare_autograder,
    quarantine_for_plugin,
)
from autograder.integrations.upload_guard import read_beneath, write_new
from autograder.reports.markdown import status_label
from autograder.results import CheckResult, PartResult
from autograder.sidecar_files import locate_sidecar
from mtkit.otter_checks import KEYS, question_summary

PLUGIN_NAME = ENGINE_PLUGIN  # this class's import path, as otter_config.json names it
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_TRAINING_TIMEOUT_S = 3600.0
KERNEL_START_TIMEOUT_S = 600  # Otter's kernel runs a blank notebook; only a loaded machine makes it slow
OPTION_KEYS = frozenset({"questions", "timeout_s", "timeouts", "train", "settings", "combined"})


@dataclass(frozen=True)
class BridgeOptions:
    """The plugin's settings (the plugin entry's mapping in otter_config.json)."""

    questions: dict[str, str] = field(default_factory=dict)  # part -> Otter question name
    timeout_s: float = DEFAULT_TIMEOUT_S  # per part, unless in `timeouts`
    timeouts: dict[str, float] = field(default_factory=dict)
    train: bool | None = None  # grade the training part; None: grader.yml's training.enabled
    settings: dict[str, Any] = field(default_factory=dict)  # grader.yml key -> value, the engine's --set
    combined: bool = True  # unit parts in one process first (falls back to one each)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> BridgeOptions:
        """Validate the plugin's mapping from otter_config.json (None: defaults); raises ValueError
        for an unknown key or a value of the wrong type."""
        config = dict(config or {})
        unknown = sorted(set(config) - OPTION_KEYS)
        if unknown:
            raise ValueError(f"{PLUGIN_NAME}: unknown option {unknown[0]!r} (known: {', '.join(sorted(OPTION_KEYS))})")
        questions = {str(k): str(v) for k, v in (config.get("questions") or {}).items()}
        timeouts = {str(k): float(v) for k, v in (config.get("timeouts") or {}).items()}
        timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
        if timeout_s <= 0 or any(v <= 0 for v in timeouts.values()):
            raise ValueError(f"{PLUGIN_NAME}: timeouts must be positive")
        train = config.get("train")
        if train is not None and not isinstance(train, bool):
            raise ValueError(f"{PLUGIN_NAME}: `train` must be true, false or null")
        settings = config.get("settings") or {}
        if not isinstance(settings, dict) or not all(isinstance(key, str) and key for key in settings):
            raise ValueError(f"{PLUGIN_NAME}: `settings` must map grader.yml keys (e.g. training.profile) to values")
        return cls(questions, timeout_s, timeouts, train, dict(settings), bool(config.get("combined", True)))

    def timeout_for(self, part: str, training: bool = False) -> float:
        """Seconds the engine may take for one part (`training`: it is the assignment's training part)."""
        default = DEFAULT_TRAINING_TIMEOUT_S if training else self.timeout_s
        return self.timeouts.get(part, default)

    def question(self, part: str) -> str:
        """The Otter question name a part is reported under."""
        return self.questions.get(part, part)


@dataclass
class EngineRun:
    """One `python -m autograder grade` process: the parts asked for and what came back."""

    parts: list[str]
    result: dict[str, Any] | None  # the engine's SubmissionResult JSON, or None
    failure: str = ""  # why there is no result (student-facing)
    seconds: float = 0.0
    log_tail: str = ""  # end of the engine's stdout/stderr (for staff)


Runner = Callable[..., EngineRun]


def _is_real_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def find_engine_root(autograder_dir: str | Path | None) -> Path:
    """The engine to run, found only from trusted places (never through the submission's path,
    which a student can make a link): Otter's `<autograder>/source` (the zip, extracted by Otter),
    else the project this module belongs to.

    Args:
        autograder_dir: Otter's autograder folder (its config's `autograder_dir`), or None.

    Returns:
        A folder holding grader.yml and the autograder package, none of them links.
    """
    candidates = [Path(__file__).resolve().parents[1]]
    if autograder_dir:
        candidates.insert(0, Path(os.path.abspath(autograder_dir)) / "source")
    for root in candidates:
        if (
            not root.is_symlink()
            and _is_real_file(root / "grader.yml")
            and _is_real_file(root / "autograder" / "cli.py")
        ):
            return root
    raise FileNotFoundError(f"no grading engine (grader.yml + autograder/) in {', '.join(map(str, candidates))}")


def _copy_sidecar(submission: Path, copy: Path, config: GraderConfig) -> None:
    """The training part reads the assignment's side files beside the graded file: bring the
    submitted one along under the copy's stem (a link stays a link, so the engine refuses it as it
    should)."""
    hook = assignment_of(config).sidecar_names  # the bridge's engine run: its one load
    patterns = hook(config, "{stem}") if hook is not None else []  # names with the stem left as "{stem}"
    found = locate_sidecar(submission, patterns)  # None for no patterns
    if found is not None and os.lstat(found[0]).st_nlink == 1:  # a copy must not launder a hard link
        target = copy.parent / found[1].replace("{stem}", copy.stem)
        shutil.copy(found[0], target, follow_symlinks=False)


def run_engine(
    submission: Path,
    parts: Sequence[str],
    timeout_s: float,
    engine_root: Path,
    *,
    train: bool = False,
    settings: Mapping[str, Any] | None = None,
) -> EngineRun:
    """Grade some parts of one submission with `python -m autograder grade` in a child process.

    Args:
        submission: the notebook or script (copied; the engine reads it and never executes it).
        parts: the parts to grade.
        timeout_s: wall-clock limit; past it the whole process group is killed.
        engine_root: folder holding grader.yml and the autograder package.
        train: pass --train (grade the training part).
        settings: grader.yml keys to set, passed as `--set KEY=VALUE` (the value as JSON, which YAML reads).

    Returns:
        The run, with the engine's JSON result or a failure reason.
    """
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="otter-bridge-") as tmp:
        copy = Path(tmp) / f"submission{submission.suffix or '.ipynb'}"
        write_new(copy, read_beneath(submission.parent, submission.name))  # no link followed
        config = load_config(engine_root / "grader.yml")
        if train and config.training_part() in parts:
            _copy_sidecar(submission, copy, config)
        out, log_path = Path(tmp) / "out", Path(tmp) / "engine.log"
        command = [sys.executable, "-m", "autograder", "grade", str(copy), "--out", str(out), "--quiet"]
        command += ["--parts", ",".join(parts), "--train" if train else "--no-train"]
        for key, value in (settings or {}).items():
            command += ["--set", f"{key}={json.dumps(value)}"]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(engine_root), os.environ.get("PYTHONPATH")])),
        }
        bundled = bundled_data_of(config)  # the assignment's data, bundled by build --data
        if bundled is not None:
            env.update(bundled.environment(engine_root, env))
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command,
                cwd=engine_root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                code = process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                code = None
        seconds, tail = (time.monotonic() - started, log_path.read_text(encoding="utf-8", errors="replace")[-4000:])
        result_path = out / "submission.json"
        if code is None:
            failure = t("otter.timed_out", timeout_s=timeout_s)
        elif code != 0 or not result_path.is_file():
            failure = t("otter.engine_failed", code=code)
        else:
            return EngineRun(list(parts), json.loads(result_path.read_text(encoding="utf-8")), "", seconds, tail)
    return EngineRun(list(parts), None, failure, seconds, tail)


def _is_skipped(part: Mapping[str, Any]) -> bool:
    return bool(part["checks"]) and all(check["skipped"] for check in part["checks"])


def _failed_part(name: str, part: PartConfig, message: str, skipped: bool = False) -> dict[str, Any]:
    """A part whose every check scored nothing, with one message, in the engine's result JSON shape."""
    checks = [CheckResult(check, name, points, False, 0, message, skipped) for check, points in part.checks.items()]
    return asdict(PartResult(name, part.title, part.points, 0, checks))


def grade_parts(
    submission: Path, engine_root: Path, options: BridgeOptions, runner: Runner | None = None
) -> tuple[dict[str, Any], list[EngineRun]]:
    """Grade every part of grader.yml with the engine, isolating parts whose run fails.

    Args:
        submission: the submission file.
        engine_root: folder holding grader.yml and the autograder package.
        options: the plugin options.
        runner: how to run the engine (default `run_engine`; a stand-in in tests).

    Returns:
        (merged result in the engine's SubmissionResult JSON shape, the runs made).
    """
    runner = runner or run_engine
    config = load_config(engine_root / "grader.yml")
    config_parts = config.parts
    train = options.train if options.train is not None else config.training.enabled
    training_part = config.training_part()  # the assignment's (None: it has none)
    unit = [name for name in config_parts if name != training_part]
    graded: dict[str, dict[str, Any]] = {}
    runs: list[EngineRun] = []

    def take(run: EngineRun) -> None:
        runs.append(run)
        by_name = {p["part"]: p for p in (run.result or {}).get("parts", [])}
        for name in run.parts:
            graded[name] = by_name.get(name) or _failed_part(
                name, config_parts[name], run.failure or t("otter.no_result")
            )

    def run_alone(name: str) -> None:
        training = name == training_part
        timeout_s = options.timeout_for(name, training=training)
        take(runner(submission, [name], timeout_s, engine_root, train=training, settings=options.settings))

    first = None
    if options.combined and len(unit) > 1:
        timeout_s = sum(map(options.timeout_for, unit))
        first = runner(submission, unit, timeout_s, engine_root, train=False, settings=options.settings)
    if first is not None and first.result is not None:
        take(first)
    else:
        if first is not None:  # the joint run failed: it is recorded, and each part runs again alone
            runs.append(first)
        for name in unit:
            run_alone(name)
    if training_part is not None:
        if train:
            run_alone(training_part)
        else:
            off = t("otter.training_off")
            graded[training_part] = _failed_part(training_part, config_parts[training_part], off, skipped=True)
    return _merge(submission.name, config_parts, graded, runs), runs


def _merge(
    label: str, config_parts: Mapping[str, PartConfig], graded: Mapping[str, dict[str, Any]], runs: Sequence[EngineRun]
) -> dict[str, Any]:
    results = [r.result for r in runs if r.result is not None]
    parts = [graded[name] for name in config_parts]
    counted = [p for p in parts if not _is_skipped(p)]
    statuses = [r["status"] for r in results]
    return {
        "submission": label,
        "status": next((s for s in statuses if s != "graded"), "graded" if statuses else "grader-error"),
        "parts": parts,
        "load_problems": list(dict.fromkeys(p for r in results for p in r.get("load_problems", []))),
        "notes": list(dict.fromkeys(n for r in results for n in r.get("notes", []))),
        "points": sum(p["points"] for p in counted),
        "max_points": sum(p["max_points"] for p in counted),
    }


class EngineQuestion(OKTestFile):  # type: ignore[misc]  # Otter has no type information
    """A graded part as Otter's question, its text (Gradescope's test output) in the catalogue's words,
    taken when it is made: Otter words it later, outside the plugin's language."""

    words: dict[str, str]

    def summary(self, public_only: bool = False) -> str:
        """The question's result, worded as `grader.check`'s in the notebook (mtkit/otter_checks.py)."""
        return question_summary(self, self.words)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as Otter's own class: `otter grade` unpickles the results on a host that may lack this project.
        return (copyreg._reconstructor, (OKTestFile, object, None), self.__dict__)  # type: ignore[attr-defined]


def part_test_file(part: Mapping[str, Any], question: str) -> OKTestFile:
    """One graded part as an Otter test file: one test case per hidden check, with its message."""
    checks = part["checks"] or [
        {
            "check_id": part["part"],
            "max_points": part["max_points"],
            "passed": False,
            "message": t("gradescope.part_not_graded"),
        }
    ]
    cases, outcomes = [], []
    for check in checks:
        case = TestCase(
            name=f"{part_title(part['part'], part['title'])}: {check['check_id']}",
            body="",
            hidden=False,
            points=check["max_points"],
            success_message=None,
            failure_message=None,
        )
        cases.append(case)
        message = t("otter.passed") if check["passed"] else (check.get("message") or t("gradescope.check_failed"))
        outcomes.append(TestCaseResult(test_case=case, message=message, passed=bool(check["passed"])))
    test_file = EngineQuestion(question, f"grader.yml:parts.{part['part']}", cases, all_or_nothing=False)
    test_file.test_case_results = outcomes
    test_file.words = {key: t(f"otter.check.{key}") for key in KEYS}
    if abs(test_file.score - part["points"]) > 1e-9:
        test_file.update_score(part["points"])
    return test_file


def summary_text(merged: Mapping[str, Any], assignment: str = "") -> str:
    """The top-level output shown to the student (score, skipped parts, loading problems, notes)."""
    lines = [assignment] if assignment else []
    score = t(
        "otter.score", points=merged["points"], max_points=merged["max_points"], status=status_label(merged["status"])
    )
    lines.append(score)
    skipped = [
        f"{part_title(p['part'], p['title'])}: {p['checks'][0]['message']}" for p in merged["parts"] if _is_skipped(p)
    ]
    for heading, entries in (
        (t("gradescope.not_graded_heading"), skipped),
        (t("gradescope.load_problems_heading"), merged["load_problems"]),
        (t("gradescope.notes_heading"), merged["notes"]),
    ):
        if entries:
            lines += ["", heading, *(f"  - {entry}" for entry in entries)]
    return "\n".join(lines)


def fill_otter_results(
    results: GradingResults, merged: Mapping[str, Any], options: BridgeOptions, assignment: str = ""
) -> None:
    """Replace Otter's test results by the engine's parts (skipped parts are left out)."""
    results.clear_results()
    for part in merged["parts"]:
        if _is_skipped(part):
            continue
        test_file = part_test_file(part, options.question(part["part"]))
        results.results[test_file.name] = test_file
    results.set_output(summary_text(merged, assignment))


def blank_submission(submission: Any) -> Any:
    """What Otter's kernel executes instead of the submission: nothing (an empty notebook/script)."""
    return "" if isinstance(submission, str) else nbformat.reads(blank_notebook_bytes().decode("utf-8"), as_version=4)


def nothing_to_grade(engine_root: Path, reasons: Sequence[str]) -> dict[str, Any]:
    """The merged result for an upload without a readable notebook: every part 0, with why."""
    config_parts = load_config(engine_root / "grader.yml").parts
    message = t("otter.no_notebook")
    graded = {name: _failed_part(name, part, message) for name, part in config_parts.items()}
    merged = _merge("(no notebook)", config_parts, graded, [])
    merged.update(status="unreadable", load_problems=[message, *reasons])
    return merged


class _PatientKernelStart:
    """While Otter executes its (blank) notebook: give its kernel a start-up timeout that holds on a
    loaded machine (nbclient's 60 s does not), by swapping in a subclass Otter imports at call time.
    Entered from `before_grading`: Otter's grade_notebook imports the class before it calls
    `before_execution`, so a swap made there comes too late."""

    def __init__(self) -> None:
        self.original: Any = None

    def __enter__(self) -> None:
        if self.original is not None:  # already swapped: the original must stay what we restore
            return
        from nbconvert import preprocessors
        from traitlets import Integer

        self.original = preprocessors.ExecutePreprocessor
        patient = type(
            "PatientExecutePreprocessor",
            (self.original,),
            {"startup_timeout": Integer(KERNEL_START_TIMEOUT_S).tag(config=True)},
        )
        # Swapping the class in nbconvert's module is the point: Otter looks it up at call time.
        preprocessors.ExecutePreprocessor = patient  # type: ignore[misc, assignment]

    def __exit__(self, *exc: object) -> None:
        if self.original is not None:
            from nbconvert import preprocessors

            preprocessors.ExecutePreprocessor = self.original  # type: ignore[misc]
            self.original = None


def engine_language(autograder_dir: Path | None) -> tuple[str, Path | None]:
    """The student's language (grader.yml feedback.language) and the assignment's catalogue.

    Args:
        autograder_dir: Otter's autograder folder, or None (see find_engine_root).

    Returns:
        (language, messages folder); English and the engine's catalogue when no engine is readable
        (grading then reports that itself).
    """
    try:
        config = load_config(find_engine_root(autograder_dir) / "grader.yml")
        return config.feedback.language, assignment_of(config).messages_dir
    except Exception:
        return FALLBACK, None


def prepare_upload(autograder_dir: Path) -> Quarantine:
    """Before Otter starts (the zip's run_otter.py): take the upload out of Otter's reach, stating
    each refused entry's reason in the student's language (it is stored as text for the report).

    Args:
        autograder_dir: Otter's autograder folder (/autograder on Gradescope).

    Returns:
        The quarantine (see otter_upload.prepare_autograder).
    """
    with use_language(*engine_language(autograder_dir)):
        return prepare_autograder(autograder_dir)


class EnginePlugin(AbstractOtterPlugin):  # type: ignore[misc]  # Otter has no type information
    """Otter plugin: the grading engine decides every part's score (see the module comment)."""

    def __init__(self, submission_path: str | None, submission_metadata: Any, plugin_config: Any) -> None:
        super().__init__(submission_path, submission_metadata, plugin_config)
        self.options = BridgeOptions.from_config(plugin_config)
        self.report = ""
        self.autograder_dir: Path | None = None
        self.upload: Quarantine | None = None
        self.kernel_start = _PatientKernelStart()
        # What the student reads comes in the engine's feedback language (known once Otter names its
        # autograder folder); English until then.
        self.language: tuple[str, Path | None] = (FALLBACK, None)

    def _take_upload(self) -> Quarantine:
        if self.upload is None:
            self.upload = quarantine_for_plugin(
                Path(self.submission_path or "submission.ipynb").absolute(), self.autograder_dir
            )
        return self.upload

    def before_grading(self, config: Any) -> None:
        """Before Otter reads `.OTTER_LOG` or starts its kernel: take the upload out of the submission
        folder (see autograder/integrations/otter_upload.py) and note Otter's autograder folder."""
        folder = getattr(config, "autograder_dir", None)
        self.autograder_dir = Path(os.path.abspath(folder)) if folder else None
        self.kernel_start.__enter__()
        self.language = engine_language(self.autograder_dir)
        with use_language(*self.language):
            self._take_upload()

    def before_execution(self, submission: Any) -> Any:
        """Keep student code out of Otter's kernel: execute an empty notebook instead."""
        return blank_submission(submission)

    def after_grading(self, results: GradingResults) -> None:
        """Grade the submission file with the engine and put its per-part results into Otter's."""
        self.kernel_start.__exit__()
        with use_language(*self.language):
            try:
                self._grade_into(results)
            finally:  # the private copy of the upload is not kept, whatever happened
                if self.upload is not None:
                    self.upload.remove()

    def _grade_into(self, results: GradingResults) -> None:
        started = time.monotonic()
        try:
            upload = self._take_upload()
            engine_root = find_engine_root(self.autograder_dir)
            runs: list[EngineRun] = []
            if upload.submission is None:
                merged = nothing_to_grade(engine_root, upload.notes())
            else:
                merged, runs = grade_parts(upload.submission, engine_root, self.options)
                merged["load_problems"] = [*upload.notes(), *merged["load_problems"]]
            assignment = assignment_title(load_config(engine_root / "grader.yml").assignment.title)
        except Exception:  # never lose a submission to a bridge bug: report it, score nothing
            print(traceback.format_exc(), flush=True)
            results.clear_results()
            results.set_output(t("otter.bridge_failed"))
            self.report = "engine bridge failed; traceback above"
            return
        fill_otter_results(results, merged, self.options, assignment)
        # The engine's result stands: whatever happened to Otter's own (blank) execution is moot.
        results._catastrophic_error = None  # noqa: SLF001 (Otter has no public setter)
        results.set_plugin_data(
            PLUGIN_NAME,
            {
                "engine_result": merged,
                "runs": [{"parts": r.parts, "seconds": round(r.seconds, 2), "failure": r.failure} for r in runs],
            },
        )
        with use_language(*self.language):  # the parts' lines in the student's language
            self.report = self._report(merged, runs, time.monotonic() - started)

    def generate_report(self) -> str:
        """Per-part scores and engine run times, printed by Otter after grading."""
        return self.report

    @staticmethod
    def _report(merged: Mapping[str, Any], runs: Sequence[EngineRun], seconds: float) -> str:
        lines = [
            f"{part_title(p['part'], p['title'])}: "
            + (t("report.skipped") if _is_skipped(p) else f"{p['points']:g}/{p['max_points']:g}")
            for p in merged["parts"]
        ]
        lines += [
            t(
                "otter.report.run" if r.result is not None else "otter.report.run_failed",
                parts=",".join(r.parts),
                seconds=r.seconds,
                failure=r.failure,
                log_tail=r.log_tail,
            )
            for r in runs
        ]
        return "\n".join([*lines, t("otter.report.total", seconds=seconds)])
