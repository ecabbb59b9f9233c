"""Command line: `python -m autograder grade | report | export | public-checks | config | validate-config | ...`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from autograder import batch
from autograder import config as grader_config
from autograder.assignment import Assignment, assignment_of
from autograder.assignment_folder import grader_yml_of
from autograder.cli_table import flag_table, subcommands_parser
from autograder.config import ConfigError, GraderConfig
from autograder.executors import ClusterTooSmall, make_executor
from autograder.exit_codes import EXIT_CRASH, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, command_error
from autograder.i18n import command_language, say, set_language, t, use_language
from autograder.instructor_commands import command_compare, command_export, print_changes
from autograder.reports.regrade import REGRADE_NAME
from autograder.reports.submission_json import dumps_stable
from autograder.reports.table import render_report
from autograder.stop_signals import sigterm_as_interrupt
from autograder.submission_times import TimesError

# The subcommands, in the order --help lists them (`public-checks`: main hands its arguments to the public
# checks' own parser); their options are in autograder/cli_flags.yml, their texts in the catalogues (cli.<command>.*).
COMMANDS = ("grade", "report", "similarity", "export", "public-checks", "config", "validate-config", "new-assignment")
# CLI flag (argparse dest) -> grader.yml key it overrides.
FLAG_TO_CONFIG_KEY = {
    spec["flags"][0].lstrip("-").replace("-", "_"): spec["key"] for spec in flag_table()["grade"] if "key" in spec
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `python -m autograder` (`COMMANDS`), its texts in the current language."""
    return subcommands_parser("autograder", COMMANDS, prog="python -m autograder")


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The grader.yml overrides given as flags (flags left out override nothing).

    Args:
        args: parsed `grade` arguments.

    Returns:
        Dotted key -> value, e.g. {"worker.timeout_s": 5.0, "training.enabled": True}: the `--set`
        pairs, then the named flags (which win for the same key).

    Raises:
        ConfigError: a `--set` argument is not KEY=VALUE with a YAML value.
    """
    overrides = grader_config.parse_settings(getattr(args, "set", None) or [])
    overrides |= {
        key: getattr(args, flag) for flag, key in FLAG_TO_CONFIG_KEY.items() if getattr(args, flag) is not None
    }
    if getattr(args, "quiet", False):
        overrides["grading.progress"] = False
    return overrides


def parse_parts(text: str | None, config: GraderConfig) -> list[str] | None:
    """Turn `--parts p1,p2` into part names, checked against grader.yml.

    Args:
        text: the flag's value, or None.
        config: the validated configuration.

    Returns:
        The names in the order given (duplicates dropped), or None for all parts.

    Raises:
        ConfigError: an unknown or empty part list.
    """
    if text is None:
        return None
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    known = list(config.parts)
    if not names:
        raise ConfigError(t("console.parts_empty", known=", ".join(known)))
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(t("console.parts_unknown", name=unknown[0], known=", ".join(known)))
    return names


def flag_error(error: ConfigError, args: argparse.Namespace) -> str:
    """A configuration error, led by the flag that set the key at fault (when a flag did).

    Args:
        error: from `load_config`; its message starts with the dotted key.
        args: parsed `grade` arguments.

    Returns:
        e.g. "--timeout: worker.timeout_s: must be greater than 0, got -1.0", or for a key `--set`
        gave, "--set: training.mode: must be one of ..., got 'x'".
    """
    message = str(error)
    for flag, key in FLAG_TO_CONFIG_KEY.items():
        if getattr(args, flag, None) is not None and message.startswith(f"{key}:"):
            return f"--{flag.replace('_', '-')}: {message}"
    given = [pair.partition("=")[0].strip() for pair in getattr(args, "set", None) or []]
    if any(message.startswith(f"{key}:") or message.startswith(f"{key}.") for key in given if key):
        return f"--set: {message}"
    return message


def _command_grade(args: argparse.Namespace) -> int:
    try:  # the models check every range (grading.jobs >= 1, worker.timeout_s > 0, ...)
        config = grader_config.load_config(args.config, config_overrides(args))
        parts = parse_parts(args.parts, config)
        submissions = batch.expand_paths(args.paths, recursive=args.recursive)
    except ConfigError as error:
        return command_error(flag_error(error, args))
    except batch.SubmissionPathError as error:
        return command_error(error)
    try:
        # The engine is imported here, by the front end, and passed down to the batch and the executors.
        from autograder.engine import grade_submission
    except ImportError as error:
        return command_error(t("console.engine_missing", error=error), EXIT_CRASH)
    assignment = assignment_of(config)  # loaded once here, passed down with the engine
    set_language(config.feedback.language, assignment.messages_dir)  # the console speaks it too
    grade_function = partial(grade_submission, assignment=assignment)
    from autograder.sandbox import IsolationUnavailable, Limits, choose_isolation
    from autograder.sandbox.uidjail import close_to_workers

    try:  # before any submission: a host without a jail is refused once, in one line
        isolation = choose_isolation(Limits(isolation=config.worker.isolation))
    except IsolationUnavailable as error:
        return command_error(error)
    if isolation == "uid":  # workers run as bare uids: no upload or report of another is theirs to read
        Path(config.grading.out_dir).mkdir(parents=True, exist_ok=True)
        close_to_workers([*args.paths, config.grading.out_dir])
    preflight = assignment.training_preflight  # said once, before grading: each training part would fail alike
    if config.training.enabled and preflight is not None and (warning := preflight(config)):
        print(warning, file=sys.stderr)
    # The batch bar: for more than one submission (a single one shows its training part's lines).
    show_progress = config.grading.progress and (
        len(submissions) > 1 or any(Path(path).is_dir() for path in args.paths)
    )
    try:
        executor = make_executor(
            args.executor,
            jobs=config.grading.jobs,
            ray_address=args.ray_address,
            ray_gpu_resource=args.ray_gpu_resource,
        )
        config = executor.prepare(config)
    except ImportError as error:
        return command_error(t("console.executor_missing", executor=args.executor, error=error))
    out_dir = Path(config.grading.out_dir)
    # From here a Ctrl-C is a KeyboardInterrupt the batch answers (what was stored stays); before, the
    # entry point's handler exits at once (autograder/__main__.py; only where it was installed, so an
    # ignored SIGINT stays ignored).
    if getattr(signal.getsignal(signal.SIGINT), "__name__", "") == "_stop_while_loading":
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run = batch.grade_batch(
            submissions,
            config,
            parts,
            out_dir,
            executor=executor,
            grade_function=grade_function,
            assignment=assignment,
            regrade=args.regrade,
            progress=show_progress,
            html=args.html,
            reporter=args.reporter_payload,
        )
    except OSError as error:
        return command_error(t("console.reports_unwritable", out_dir=out_dir, error=error), EXIT_CRASH)
    except (ClusterTooSmall, TimesError) as error:
        return command_error(error)
    except batch.BatchInterrupted as interrupted:
        say("progress.interrupted", stored=interrupted.stored, out_dir=out_dir)
        return EXIT_INTERRUPTED
    finally:  # e.g. the Ray started for this batch, and its folder
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    results = run.results
    if args.json:
        sys.stdout.write(dumps_stable([result.to_json() for result in results]))
    elif not args.quiet:
        sys.stdout.write(render_report(results, config.parts))
    if not args.quiet:
        key = "console.graded_reused" if run.reused else "console.graded"
        say(key, count=len(run.graded), reused=len(run.reused), out_dir=out_dir)
        if run.regraded:
            print_changes(run.changes, out_dir / REGRADE_NAME)
    return EXIT_OK


def _command_class_view(out_dir: Path, assignment: Assignment) -> int:
    from autograder.reports.class_view import CLASS_HTML, write_class_view

    config, results, stems, missing = batch.load_stored_batch(out_dir)
    links = [f"{stem}.html" if (out_dir / f"{stem}.html").is_file() else f"{stem}.md" for stem in stems]
    write_class_view(results, config, assignment, out_dir, missing, links)
    say("console.class_view", path=out_dir / CLASS_HTML, count=len(results), missing=len(missing))
    return EXIT_OK


def _command_report(args: argparse.Namespace) -> int:
    try:  # the assignment the stored batch graded, loaded once for whichever report is asked
        config = batch.stored_config(args.out_dir)
        assignment = assignment_of(config)
    except FileNotFoundError as error:
        return command_error(error)
    set_language(config.feedback.language, assignment.messages_dir)
    if args.compare is not None:
        return command_compare(args.out_dir, args.compare, assignment)
    if args.class_view:
        return _command_class_view(args.out_dir, assignment)
    reported, missing = batch.rebuild_reports(args.out_dir, assignment, html=args.html, reporter=args.reporter_payload)
    say("console.rebuilt", out_dir=args.out_dir, count=reported)
    if missing:
        say("console.not_graded_yet", count=len(missing), names=", ".join(missing))
    return EXIT_OK


def _command_validate(path: Path | None, assignment: str | None) -> int:
    overrides = {} if assignment is None else {"assignment.name": assignment}
    shown = path or (grader_yml_of(assignment) if assignment else grader_config.DEFAULT_CONFIG_PATH)
    try:
        config = grader_config.load_config(path, overrides)
    except ConfigError as error:
        return command_error(error)
    points = sum(part.points for part in config.parts.values())
    training = config.training.summary()
    print(t("console.valid", path=shown, parts=len(config.parts), points=f"{points:g}", training=training))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: the arguments after the program name (None: sys.argv[1:]).

    Returns:
        The exit code: 0 when grading completed (whatever the scores), 2 for usage or
        configuration errors, 1 when the grader crashed before producing results, 130 after
        Ctrl-C and 143 after SIGTERM (both stop the same way: what was stored stays).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["public-checks"]:  # its own parser: the student workflow's exact runner
        from autograder.integrations.public_checks import main as public_checks

        return public_checks(argv[1:], prog="python -m autograder public-checks")
    with use_language(command_language(argv)):  # --help's, usage errors', the console's until a grader.yml is read
        args = build_parser().parse_args(argv)
        with sigterm_as_interrupt() as terminated:
            try:
                code = _run_command(args)
            except KeyboardInterrupt:  # SIGTERM in the instant the command returned
                code = EXIT_INTERRUPTED
    return EXIT_TERMINATED if terminated and code == EXIT_INTERRUPTED else code


def run(argv: Sequence[str] | None = None) -> NoReturn:
    """`python -m autograder`: `main(argv)`, then exit. Once stopped it exits with the line printed,
    skipping the interpreter's teardown (seconds with torch) and the joins of pool processes that
    still unwind (they end themselves, see executors.local; sandboxes die with their parent)."""
    code = main(argv)
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        import multiprocessing.util  # the pool's semaphores unlinked: else its resource tracker warns of leaks

        multiprocessing.util._run_finalizers(0)  # type: ignore[attr-defined]  # what its own exit handler runs first
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def _command_new_assignment(name: str) -> int:
    """Write assignments/NAME/ from the scaffold (docs/ASSIGNMENTS.md). Args: name. Returns: the exit code."""
    from autograder.assignment_folder import AssignmentError, write_scaffold

    try:
        folder = write_scaffold(name)
    except AssignmentError as error:
        return command_error(error)
    say("console.new_assignment", folder=folder, name=name)
    return EXIT_OK


def _run_command(args: argparse.Namespace) -> int:
    """Args: the parsed command line. Returns: its exit code (Ctrl-C and crashes included)."""
    try:
        if args.command == "config":
            try:
                print(grader_config.describe(args.assignment))
            except ConfigError as error:
                return command_error(error)
            return EXIT_OK
        if args.command == "validate-config":
            return _command_validate(args.file, args.assignment)
        if args.command == "new-assignment":
            return _command_new_assignment(args.name)
        if args.command == "report":
            return _command_report(args)
        if args.command == "export":
            return command_export(args)
        if args.command == "similarity":
            from autograder.similarity.command import run_similarity

            return run_similarity(args)
        return _command_grade(args)
    except KeyboardInterrupt:  # before or after the batch (during it: _command_grade says what was stored)
        say("progress.interrupted_plain")
        return EXIT_INTERRUPTED
    except Exception:  # a bug in the grader: show it, and say so with the exit code
        traceback.print_exc()
        return EXIT_CRASH
