"""What the generated Classroom50 autograder.py runs on the student's runner: public checks only."""

# The Classroom50 runner executes `python <bundle>/autograder.py` with the student's checkout as
# the working directory and CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, OWNER, COMMIT_URL, ... in the
# environment. A copy of this module ships in the bundle (see build.py), so it imports only the
# standard library and the other shipped modules.
#
# The student's notebook runs in a CHILD process (this same script with `--child`), as a fresh uid
# on a copy of the checkout: it cannot stop a valid result.json from being written, read this
# process's environment (/proc/<pid>/environ is its owner's), write $GITHUB_OUTPUT, the checkout or
# result.json, and every process of that uid (new sessions, double forks) is killed before
# result.json is written (`--reap`). That needs root: the runner's own (a container job) or
# `sudo -n` (GitHub's hosted runners); without either the checks do not run. Only JSON comes back,
# clamped to the bundle's per-part maxima.
# The student controls this runner anyway (this is why no hidden check ships here), so the
# result is feedback, not a grade; the grade comes from the instructor's hidden grading.

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder.i18n import t, use_language
from autograder.integrations.classroom50.result_v1 import (
    RELEASE_BODY_FILENAME,
    RESULT_FILENAME,
    Identity,
    PartOutcome,
    fenced,
    make_result,
    release_body,
    status_and_summary,
    utc_stamp,
)
from autograder.integrations.github import write_outputs

SETTINGS_FILE = "assignment.json"
CHILD_FLAG, REAP_FLAG = "--child", "--reap"
FRESH_UID_BASE, FRESH_UID_SPAN = 2**20, 2**30  # uids no account has, as the project's sandbox picks them
MAX_CHILD_OUTPUT_BYTES = 8 * 1024 * 1024
REQUIRED_MODULES = ("torch", "otter", "nbformat", "yaml")
# Not passed to the child: files that feed later workflow steps, and credentials.
WITHHELD_ENV = ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE", "GITHUB_TOKEN")
WITHHELD_PREFIXES = ("ACTIONS_",)


def identity_from_env(environ: dict[str, str]) -> Identity:
    """The submission's identity from the runner's environment.

    Args:
        environ: the environment.

    Returns:
        The identity; links fall back to what the runner derives them from.

    Raises:
        KeyError: CLASSROOM, ASSIGNMENT or SUBMISSION_TAG is missing (not run by the runner).
    """
    for name in ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG"):
        if not environ.get(name, "").strip():
            raise KeyError(name)
    server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    repository = environ.get("GITHUB_REPOSITORY", "")
    sha = environ.get("GITHUB_SHA", "")
    commit = environ.get("COMMIT_URL") or f"{server}/{repository}/commit/{sha}"
    owner = environ.get("OWNER") or environ.get("USERNAME") or environ.get("GITHUB_ACTOR") or "unknown"
    return Identity(
        classroom=environ["CLASSROOM"].strip(),
        assignment=environ["ASSIGNMENT"].strip(),
        owner=owner,
        submission=environ["SUBMISSION_TAG"].strip(),
        commit=commit,
        release=environ.get("RELEASE_URL") or commit,
        review=environ.get("REVIEW_URL") or commit,
        submitted_at=utc_stamp(),  # the runner stamps the graded commit's committer date over it
        assignment_type=environ.get("ASSIGNMENT_TYPE") or "individual",
    )


def missing_modules() -> list[str]:
    """Modules the public checks need that this Python lacks."""
    import importlib.util

    return [name for name in REQUIRED_MODULES if importlib.util.find_spec(name) is None]


def install_requirements(bundle: Path) -> bool:
    """Install the bundle's pinned environment into this Python (torch from the CPU index first).

    Args:
        bundle: the autograder folder (holds requirements.lock).

    Returns:
        Whether pip succeeded.
    """
    lock = (bundle / "requirements.lock").read_text(encoding="utf-8").splitlines()
    torch = [line for line in lock if line.startswith("torch==")]
    rest = [line for line in lock if line.strip() and not line.startswith(("torch==", "#"))]
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    with tempfile.TemporaryDirectory() as scratch:
        others = Path(scratch) / "requirements.txt"
        others.write_text("\n".join(rest) + "\n", encoding="utf-8")
        steps = [[*pip, *torch, "--index-url", "https://download.pytorch.org/whl/cpu"]] if torch else []
        steps.append([*pip, "-r", str(others)])
        return all(subprocess.run(step, check=False).returncode == 0 for step in steps)


def root_prefix() -> list[str] | None:
    """How to run a command as root: as it is when this is root, with `sudo -n` where sudo asks no
    password (GitHub's hosted runners), None when neither works."""
    if os.geteuid() == 0:
        return []
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        if subprocess.run(["sudo", "-n", "true"], capture_output=True, timeout=60, check=False).returncode == 0:
            return ["sudo", "-n"]
    return None


def run_child(bundle: Path, workspace: Path, timeout_s: float, started: float) -> tuple[dict[str, Any] | None, str]:
    """Run the public checks on a copy of the checkout as a fresh uid, then kill every process of that uid.

    Args:
        bundle: the autograder folder.
        workspace: the student's checkout (copied, without .git, to the child's working directory).
        timeout_s: limit for the whole of autograder.py, counted from `started` (time.monotonic()).
        started: when autograder.py started: the install and the copies count against the limit.

    Returns:
        (the child's JSON report, "") or (None, why there is none, student-facing).
    """
    root = root_prefix()
    if root is None:
        return None, t("classroom50.public.reason_no_isolation")
    uid = FRESH_UID_BASE + secrets.randbelow(FRESH_UID_SPAN)
    scratch = Path(tempfile.mkdtemp(prefix="classroom50-"))
    scratch.chmod(0o755)  # the uid reads the copies through it; only the child (as root) hands it work/
    work, report, script = scratch / "work", scratch / "report.json", scratch / "bundle" / "autograder.py"
    try:
        shutil.copytree(bundle, script.parent, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(workspace, work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        report.touch()
        env = [
            f"{k}={v}" for k, v in os.environ.items() if k not in WITHHELD_ENV and not k.startswith(WITHHELD_PREFIXES)
        ]
        checks = [sys.executable, str(script), CHILD_FLAG, str(uid), str(report)]
        process = subprocess.Popen([*root, "env", "-i", *env, *checks], cwd=work)
        try:
            code: int | None = process.wait(timeout=timeout_s - (time.monotonic() - started))
        except subprocess.TimeoutExpired:
            code = None
        reap = [*root, sys.executable, str(script), REAP_FLAG, str(uid), str(work)]
        subprocess.run(reap, check=False)
        while process.poll() is None:  # it was still root, not yet the uid: reap again once it is
            time.sleep(0.5)
            subprocess.run(reap, check=False)
        if code is None:
            return None, t("classroom50.public.reason_timeout", seconds=f"{timeout_s:g}")
        with contextlib.suppress(OSError, ValueError):
            if report.is_file() and not report.is_symlink() and report.stat().st_size <= MAX_CHILD_OUTPUT_BYTES:
                loaded = json.loads(report.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    return loaded, ""
        if code != 0:
            return None, t("classroom50.public.reason_exit", code=code)
        return None, t("classroom50.public.reason_no_output")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _become(uid: int) -> None:
    """As root: become `uid` (its own gid, no supplementary groups) for good."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def _reap(uid: int, work: Path) -> int:
    """As root (`--reap UID WORK`): kill every process of `uid`, then remove the work copy it owns."""
    while any(_lives(status, uid) for status in Path("/proc").glob("[0-9]*/status")):
        killer = os.fork()  # again while any is left: the uid's processes may kill a killer, not root
        if killer == 0:
            _become(uid)  # kill(-1) as the uid reaches every process of it, whatever its session or parent
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
            os._exit(0)
        os.waitpid(killer, 0)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _lives(status: Path, uid: int) -> bool:
    """Whether /proc/<pid>/status is a live (not zombie) process of `uid`."""
    with contextlib.suppress(OSError):
        text = status.read_text(encoding="utf-8")
        return f"\nUid:\t{uid}\t" in text and "\nState:\tZ" not in text
    return False


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan


def title_of(part: dict[str, Any], language: str) -> str:
    """A part's title in `language` (build wrote them per language), else its grader.yml title."""
    return str((part.get("titles") or {}).get(language) or part["title"])


def part_outcomes(
    settings: dict[str, Any], report: dict[str, Any] | None, failure: str, language: str
) -> list[PartOutcome]:
    """One outcome per part with public checks, from the child's report (clamped to the bundle's maxima).

    Args:
        settings: the bundle's assignment.json.
        report: the child's JSON, or None.
        failure: why there is no report ("" when there is one).
        language: the language of the titles.

    Returns:
        The outcomes in part order; a part missing from the report failed with the reason.
    """
    checks = {}
    if report is not None and isinstance(report.get("checks"), list):
        checks = {str(c.get("name")): c for c in report["checks"] if isinstance(c, dict)}
    if report is not None and report.get("no_notebook"):
        failure = t("classroom50.public.no_notebook", detail=str(report["no_notebook"]))
    elif report is not None and not checks:
        failure = failure or t("classroom50.public.reason_no_output")
    outcomes = []
    for part in settings["parts"]:
        possible = float(part["points"])
        check = checks.get(part["question"])
        title = title_of(part, language)
        if check is None:
            message = failure or t("classroom50.public.did_not_finish", reason=t("classroom50.public.reason_no_output"))
            outcomes.append(PartOutcome(part["part"], title, 0.0, possible, False, message))
            continue
        earned = min(max(_number(check.get("points")), 0.0), possible)
        earned = 0.0 if math.isnan(earned) else earned
        cases = [c for c in check.get("cases") or [] if isinstance(c, dict)]
        error = str(check.get("error") or "")
        passed = not error and bool(cases) and all(c.get("passed") is True for c in cases) and earned >= possible
        if error:
            message = t("classroom50.public.check_error", error=error)
        else:
            message = "\n\n".join(
                f"{c.get('name')}: {c.get('message') or ''}".strip() for c in cases if not c.get("passed")
            )
        outcomes.append(PartOutcome(part["part"], title, earned, possible, passed, message))
    return outcomes


def grade(bundle: Path, workspace: Path, environ: dict[str, str], started: float) -> int:
    """Run the public checks on the checkout and write result.json, release-body.md and the outputs.

    Args:
        bundle: the autograder folder.
        workspace: the student's checkout.
        environ: the runner's environment.
        started: time.monotonic() when autograder.py started (its limit counts the install too).

    Returns:
        0 when result.json was written; 1 for an infrastructure failure (the runner then reports an error).
    """
    settings = json.loads((bundle / SETTINGS_FILE).read_text(encoding="utf-8"))
    try:
        identity = identity_from_env(environ)
    except KeyError as missing:
        print(f"autograder: {missing.args[0]} is not set; run this from the Classroom50 runner", file=sys.stderr)
        return 1
    installable = environ.get("AUTOGRADER_NO_INSTALL") != "1"
    if missing_modules() and installable and (not install_requirements(bundle) or missing_modules()):
        print(f"autograder: cannot install {', '.join(missing_modules())}", file=sys.stderr)
        return 1
    language = environ.get("AUTOGRADER_LANGUAGE") or settings.get("language", "ko")
    with use_language(language):
        report, failure = run_child(bundle, workspace, float(settings["timeout_s"]), started)
        if failure:
            failure = t("classroom50.public.did_not_finish", reason=failure)
        parts = part_outcomes(settings, report, failure, language)
        result = make_result(identity, parts)
        lead = [t("classroom50.public.only")]
        if settings.get("parts_without_public_checks"):
            titles = [title_of(p, language) for p in settings["parts_without_public_checks"]]
            lead.append(t("classroom50.public.not_checked", parts=", ".join(titles)))
        tail = [t("classroom50.rounding")]
        problems = [str(p) for p in (report or {}).get("problems") or []][:20]
        if problems:
            tail = [f"**{t('report.load_problems_long')}**\n\n" + "\n".join(fenced("\n".join(problems))), *tail]
        body = release_body(result, "classroom50.public.title", lead, tail)
        status, summary = status_and_summary(result)
    for name in (RESULT_FILENAME, RELEASE_BODY_FILENAME):  # a committed link is not followed (the notebook has a copy)
        (workspace / name).unlink(missing_ok=True)
    (workspace / RESULT_FILENAME).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (workspace / RELEASE_BODY_FILENAME).write_text(body, encoding="utf-8")
    write_outputs(environ.get("GITHUB_OUTPUT"), {"status": status, "summary": summary})  # one line
    print(f"autograder: {summary}")
    return 0


def child(bundle: Path, uid: int, report_path: Path) -> int:
    """The child, started as root: become `uid`, load the notebook, run the public tests, write the report.

    Args:
        bundle: the autograder folder.
        uid: the fresh uid to run as; the working copy and the report are handed to it first.
        report_path: where the report goes.

    Returns:
        0.
    """
    from dataclasses import asdict

    from autograder.integrations.public_checks import find_notebook, run_public_checks

    workspace = Path.cwd()
    for folder, dirs, files in os.walk(workspace):  # never follows a symbolic link out of the copy
        for path in [folder, *(os.path.join(folder, name) for name in dirs + files)]:
            os.lchown(path, uid, uid)
    os.lchown(report_path, uid, uid)
    _become(uid)
    os.environ["HOME"] = str(workspace)
    settings = json.loads((bundle / SETTINGS_FILE).read_text(encoding="utf-8"))
    sys.path.insert(1, str(workspace))  # the notebook's own imports (mtkit) resolve as in Jupyter
    try:
        notebook = find_notebook(workspace, os.environ.get("NOTEBOOK", ""))
    except FileNotFoundError as error:
        report_path.write_text(json.dumps({"no_notebook": str(error)}), encoding="utf-8")
        return 0
    outcomes, problems = run_public_checks(notebook, bundle / "tests", float(settings.get("check_timeout_s", 120)))
    report = {"notebook": notebook.name, "problems": problems, "checks": [asdict(o) for o in outcomes]}
    report_path.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    return 0


def main(bundle: Path, argv: list[str]) -> int:
    """autograder.py's entry: grade (no arguments) or, internally, `--child UID REPORT` and `--reap UID WORK`.

    Args:
        bundle: the autograder folder.
        argv: the arguments after the script.

    Returns:
        The exit code.
    """
    if argv[:1] == [CHILD_FLAG] and len(argv) == 3:
        return child(bundle, int(argv[1]), Path(argv[2]))
    if argv[:1] == [REAP_FLAG] and len(argv) == 3:
        return _reap(int(argv[1]), Path(argv[2]))
    return grade(bundle, Path.cwd(), dict(os.environ), time.monotonic())  # the limit counts from here
