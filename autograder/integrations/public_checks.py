"""Public checks in a student repository: Otter test files run against the notebook's definitions."""

# This module is copied into the student template (.github/autograding/, see student_bundle.py)
# together with the notebook loader, github.py, reports/reporter_payload.py and mtkit/otter_checks.py,
# so it imports only the standard library, those, nbformat, otter-grader and (lazily) torch. It never sees the
# hidden checks: those live in assignments/<name>/checks/, which is not copied. The notebook is loaded the
# way the grader loads it (definitions only: top-level training, downloads and plots are not run),
# then every Otter test file in the tests folder (OK format or exception format) runs on a copy of
# those definitions.

from __future__ import annotations

import builtins
import contextlib
import copy
import inspect
import io
import json
import os
import signal
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autograder.i18n import LANGUAGES, CommandParser, command_language, say, t, use_language
from autograder.integrations.github import append_summary, reporter_outputs, write_outputs
from autograder.notebook import load_submission
from autograder.reports.reporter_payload import payload_test, runner_id, runner_payload
from autograder.worker_runtime.library_calls import install
from mtkit.otter_checks import KEYS, case_details

# The module globals the grader injects, as the assignment declares them (`Assignment.grader_globals`):
# the template build writes them beside the public tests, so this module names no assignment.
# "device" becomes a torch.device.
GLOBALS_FILE = "grader_globals.json"
# The library calls the graded parts may not use (their `forbidden_calls`), written beside it by the
# same build: a public check that makes one warns the student, as grading would refuse it.
LIBRARY_CALLS_FILE = "library_calls.json"
MESSAGE_LIMIT = 1500
DEFAULT_TIMEOUT_S = 120.0
RESULTS_DIR = "public-checks"


@dataclass
class CaseOutcome:
    """One test case of an Otter test file."""

    name: str
    passed: bool
    points: float
    possible: float
    message: str = ""
    code: str = ""


@dataclass
class CheckOutcome:
    """One Otter test file (a question such as q1): its cases and points."""

    name: str
    path: str
    points: float
    possible: float
    cases: list[CaseOutcome] = field(default_factory=list)
    error: str = ""  # the file could not be run at all
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Whether every case passed."""
        return not self.error and all(case.passed for case in self.cases)


class CheckTimeout(Exception):
    """A test file ran longer than allowed."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise CheckTimeout after `seconds` (Unix main thread only; elsewhere no limit)."""
    usable = hasattr(signal, "setitimer") and seconds > 0
    try:
        previous = signal.signal(signal.SIGALRM, _raise_timeout) if usable else None
    except ValueError:  # not the main thread
        usable, previous = False, None
    if usable:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if usable:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _raise_timeout(signum: int, frame: Any) -> None:
    raise CheckTimeout("time limit reached")


def provided_globals(tests_dir: Path) -> dict[str, Any]:
    """Fresh copies of the globals the grader provides, from the public tests' `GLOBALS_FILE`.

    Args:
        tests_dir: the folder of Otter test files (none provided when it has no such file).

    Returns:
        Name -> value ("device" as a torch.device when torch is importable).
    """
    path = tests_dir / GLOBALS_FILE
    values: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if "device" in values:
        with contextlib.suppress(ImportError):
            import torch

            values["device"] = torch.device(values["device"])
    return values


def find_notebook(root: Path, name: str = "") -> Path:
    """The notebook to check: `name` when given, else the only .ipynb at the repository root.

    Args:
        root: the repository root.
        name: a path relative to root, or "".

    Returns:
        The notebook's path.

    Raises:
        FileNotFoundError: no notebook, or several and none named.
    """
    if name:
        path = root / name
        if not path.is_file():
            raise FileNotFoundError(t("public.no_such_notebook", name=name))
        return path
    found = sorted(p for p in root.glob("*.ipynb") if not p.name.startswith("."))
    if len(found) != 1:
        listed = ", ".join(f"`{p.name}`" for p in found) or "-"
        raise FileNotFoundError(t("public.not_one_notebook", listed=listed))
    return found[0]


def otter_test_files(tests_dir: Path) -> list[Path]:
    """The Otter test files of a folder (`*.py` defining OK_FORMAT), sorted by name."""
    return sorted(
        p
        for p in tests_dir.glob("*.py")
        if not p.name.startswith(("_", ".")) and "OK_FORMAT" in p.read_text(encoding="utf-8")
    )


def load_definitions(
    notebook: Path, provided: dict[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[dict[str, Any], list[str]]:
    """Run the notebook's definitions (as the grader keeps them) in a fresh namespace.

    Args:
        notebook: the .ipynb (or .py export).
        provided: the globals the grader provides (`provided_globals`).
        timeout_s: limit for running all definitions.

    Returns:
        The namespace and the problems to show (cells that did not parse, statements that raised).
    """
    loaded = load_submission(notebook, provided_names=frozenset(provided))
    problems = [p.describe() for p in loaded.problems]
    namespace: dict[str, Any] = {"__name__": "__notebook__", "__builtins__": builtins}
    namespace.update(copy.deepcopy(provided))  # fresh copies: definitions may mutate them
    printed = io.StringIO()
    try:
        with _time_limit(timeout_s), contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            for statement in loaded.statements:
                try:
                    code = compile("\n" * (statement.line - 1) + statement.code, f"<cell {statement.cell}>", "exec")
                    exec(code, namespace)
                except CheckTimeout:
                    raise
                except Exception as error:  # a failing import only breaks what depends on it
                    raised = t("public.raised", error=f"`{type(error).__name__}: {error}`")
                    problems.append(t("notebook.where", cell=statement.cell, line=statement.line, message=raised))
    except CheckTimeout:
        problems.append(t("public.definitions_timeout", timeout_s=timeout_s))
    namespace.update(copy.deepcopy(provided))  # fresh copies: definitions may mutate them
    return namespace, problems


def _case_message(message: str | None, failure_message: str | None) -> str:
    """The test's own hint (failure_message) followed by what actually went wrong, Otter's "Error at
    line …" frame in the catalogue's words as `grader.check` shows it (mtkit/otter_checks.py)."""
    text = (message or "").replace("❌ Test case failed", "").strip()
    if "Failed example:" in text:  # keep doctest's report of the failing line, not the whole run
        text = text[text.index("Failed example:") :].split("\nTrying:\n", 1)[0]
    else:
        text = "\n".join(case_details(text, {key: t(f"otter.check.{key}") for key in KEYS}))
    if failure_message:
        text = failure_message.strip() + ("\n\n" + text if text else "")
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "\n..."


def case_code(body: Any) -> str:
    """The text of a test case: an OK-format case's doctest, an exception-format case's function source.

    Args:
        body: `TestCase.body` (a string, or the decorated `test_case` object holding `test_func`).

    Returns:
        The source text; "" when it cannot be found (never an object's repr).
    """
    if isinstance(body, str):
        return body
    function = getattr(body, "test_func", body)
    try:
        return inspect.getsource(function) if callable(function) else ""
    except (OSError, TypeError):
        return ""


def run_test_file(path: Path, namespace: dict[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S) -> CheckOutcome:
    """Run one Otter test file on the namespace, as `grader.check` does in the notebook.

    The namespace itself is used, not a copy: tests may rebind globals (e.g. vocab_size) that the
    student's functions read through their `__globals__`. The grader-provided globals are reset
    before each file so that one file cannot leave them changed for the next.

    Args:
        path: the test file.
        namespace: from `load_definitions`.
        timeout_s: limit for the whole file.

    Returns:
        The outcome; a file that cannot be run is an outcome with `error` set and 0 points.
    """
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    started = time.monotonic()
    try:
        test_file = create_test_file(str(path), NBMetadataConfig())
    except Exception as error:
        return CheckOutcome(path.stem, str(path), 0, 0, error=t("public.unreadable_test", error=f"`{error}`"))
    possible = float(test_file.possible)
    try:
        namespace.update(provided_globals(path.parent))
        with _time_limit(timeout_s), contextlib.redirect_stdout(io.StringIO()):
            test_file.run(namespace)
    except Exception as error:  # CheckTimeout included
        if isinstance(error, CheckTimeout):
            message = t("public.checks_timeout", timeout_s=timeout_s)
        else:
            message = t("public.raised", error=f"`{type(error).__name__}: {error}`")
        return CheckOutcome(test_file.name, str(path), 0, possible, seconds=time.monotonic() - started, error=message)
    nothing = bool(getattr(test_file, "all_or_nothing", False)) and not test_file.passed_all
    cases = [
        CaseOutcome(
            result.test_case.name,
            result.passed,
            0.0 if nothing or not result.passed else float(result.test_case.points or 0),
            float(result.test_case.points or 0),
            "" if result.passed else _case_message(result.message, result.test_case.failure_message),
            case_code(result.test_case.body),
        )
        for result in test_file.test_case_results
    ]
    return CheckOutcome(
        test_file.name,
        str(path),
        sum(case.points for case in cases),
        possible,
        cases,
        seconds=time.monotonic() - started,
    )


def run_public_checks(
    notebook: Path, tests_dir: Path, timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[list[CheckOutcome], list[str]]:
    """Load the notebook once and run every test file of `tests_dir` on it.

    Args:
        notebook: the student's notebook.
        tests_dir: the folder of Otter test files.
        timeout_s: limit per test file (and for loading).

    Returns:
        The outcomes in file-name order and the notebook's load problems (with a warning naming the
        library calls the tests saw that grading refuses).
    """
    listed = tests_dir / LIBRARY_CALLS_FILE
    watched: list[str] = json.loads(listed.read_text(encoding="utf-8")) if listed.is_file() else []
    seen: set[str] = set()
    restore = install(watched, seen.add)  # before the definitions: their imports bind the stand-ins
    try:
        namespace, problems = load_definitions(notebook, provided_globals(tests_dir), timeout_s)
        outcomes = [run_test_file(path, namespace, timeout_s) for path in otter_test_files(tests_dir)]
    finally:
        restore()
    if seen:
        problems.append(t("public.library_calls", calls=", ".join(name for name in watched if name in seen)))
    return outcomes, problems


def outcome_payloads(outcomes: Sequence[CheckOutcome]) -> dict[str, dict[str, Any]]:
    """Reporter payloads, one runner per test file; scores add up to the public-check total."""
    payloads = {}
    for outcome in outcomes:
        if outcome.error:
            tests = [payload_test(outcome.name, False, 0, outcome.error, filename=outcome.path, error=True)]
        else:
            tests = [
                payload_test(
                    case.name,
                    case.passed,
                    case.points,
                    case.message,
                    test_code=case.code,
                    filename=outcome.path,
                    seconds=outcome.seconds / max(len(outcome.cases), 1),
                )
                for case in outcome.cases
            ]
        payloads[runner_id(outcome.name)] = runner_payload(tests, outcome.possible)
    return payloads


def _points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")


def summary_markdown(notebook: str, outcomes: Sequence[CheckOutcome], problems: Sequence[str]) -> str:
    """The job summary: a table with a row per check (question), then what failed and why."""
    total = sum(o.points for o in outcomes)
    possible = sum(o.possible for o in outcomes)
    lines = [
        t("public.title", notebook=notebook),
        "",
        t("public.total", points=_points(total), possible=_points(possible)),
        "",
        f"| {t('public.column.check')} | {t('public.column.result')} | {t('public.column.points')} |",
        "|---|---|---:|",
    ]
    for o in outcomes:
        failed = sum(not c.passed for c in o.cases)
        if o.error:
            result = t("public.result.error")
        elif o.passed:
            result = t("public.result.passed")
        else:
            result = t("public.result.failed", failed=failed, count=len(o.cases))
        lines.append(f"| {o.name} | {result} | {_points(o.points)}/{_points(o.possible)} |")
    for o in outcomes:
        if o.passed:
            continue
        details = [o.error] if o.error else [f"{c.name}:\n{c.message}" for c in o.cases if not c.passed]
        body = "\n\n".join(details).replace("```", "'''")
        summary = f"<details><summary>{t('public.what_failed', name=o.name)}</summary>"
        lines.extend(["", summary, "", "```text", body, "```", "", "</details>"])
    if problems:
        lines.extend(["", f"**{t('report.load_problems_long')}**", "", *(f"- {p}" for p in problems)])
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the public checks; write the job summary, step outputs and a results folder.

    Args:
        argv: the arguments (None: sys.argv[1:]).
        prog: the program name shown in usage messages.

    Returns:
        0; with --strict, 1 when a check failed or the notebook is missing; 2 for no test files.
    """
    # --language, else env FEEDBACK_LANGUAGE, else ko: the messages', --help's too (its texts: cli.public-checks.*)
    with use_language(command_language(argv)):
        parser = CommandParser(prog=prog, description=t("cli.public-checks.description"))
        named = os.environ.get("NOTEBOOK", "")
        parser.add_argument("notebook", nargs="?", default=named, help=t("cli.public-checks.notebook"))
        parser.add_argument("--tests", default="tests", help=t("cli.public-checks.--tests"))
        parser.add_argument("--out", default=RESULTS_DIR, help=t("cli.public-checks.--out"))
        parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help=t("cli.public-checks.--timeout"))
        parser.add_argument("--strict", action="store_true", help=t("cli.public-checks.--strict"))
        parser.add_argument("--language", choices=LANGUAGES, help=t("cli.public-checks.--language"))
        args = parser.parse_args(argv)
        tests_dir = Path(args.tests)
        if not otter_test_files(tests_dir):
            say("console.error", message=t("public.no_tests", folder=tests_dir))
            return 2
        try:
            notebook = find_notebook(Path.cwd(), args.notebook)
        except FileNotFoundError as error:
            append_summary(os.environ.get("GITHUB_STEP_SUMMARY"), f"{t('public.heading')}\n\n⚠️ {error}\n")
            say("console.error", message=error)
            return 1 if args.strict else 0
        outcomes, problems = run_public_checks(notebook, tests_dir, args.timeout)
        payloads = outcome_payloads(outcomes)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        results = {"notebook": notebook.name, "problems": problems, "checks": [asdict(o) for o in outcomes]}
        for name, data in (("results.json", results), ("payloads.json", payloads)):
            (out / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        append_summary(os.environ.get("GITHUB_STEP_SUMMARY"), summary_markdown(notebook.name, outcomes, problems))
        total, possible = sum(o.points for o in outcomes), sum(o.possible for o in outcomes)
        write_outputs(
            os.environ.get("GITHUB_OUTPUT"),
            {**reporter_outputs(payloads), "score": _points(total), "max-score": _points(possible)},
        )
        print(t("public.console_total", points=_points(total), possible=_points(possible)))
        return 1 if args.strict and not all(o.passed for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
