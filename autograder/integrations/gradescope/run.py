"""Gradescope entry point: grade the notebook in /autograder/submission, write results.json."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from autograder import batch
from autograder import config as grader_config
from autograder.assignment import assignment_of, bundled_data_of
from autograder.cli_table import parse_command
from autograder.i18n import assignment_title, t, use_language
from autograder.integrations.merge_results import missing_result
from autograder.integrations.upload_guard import UnsafeFile, UploadScan, read_beneath, scan_upload, write_new
from autograder.late import SubmissionTime, apply_late_policy
from autograder.reports.gradescope import write_gradescope_results
from autograder.reports.table import render_report
from autograder.results import STATUS_UNREADABLE, SubmissionResult
from autograder.submission_times import TimesError, gradescope_time

IGNORED_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__"}
TRUE_WORDS = {"1", "true", "yes", "on"}
METADATA_NAME = "submission_metadata.json"  # Gradescope puts it in /autograder, beside submission/


def pick_submission(folder: Path, preferred: str = "", scan: UploadScan | None = None) -> tuple[Path | None, str]:
    """The file to grade among the uploaded ones: the notebook (else a .py export); links, special
    files and hard links are never picked.

    Args:
        folder: /autograder/submission.
        preferred: a file name to prefer when several notebooks were uploaded.
        scan: the upload's scan (None: scanned here).

    Returns:
        The file (None when there is nothing gradable) and a note for the student ("" if none).
    """
    scan = scan if scan is not None else scan_upload(folder)
    # The scan lists regular, singly linked files only (links and special files were refused).
    visible = [n for n in sorted(scan.files) if not any(p.startswith(".") or p in IGNORED_DIRS for p in n.split("/"))]
    for suffix in (".ipynb", ".py"):
        found = [folder / name for name in visible if name.endswith(suffix)]
        if not found:
            continue
        chosen = next((p for p in found if p.name == preferred), found[0])
        if len(found) == 1:
            return chosen, ""
        names = ", ".join(p.relative_to(folder).as_posix() for p in found)
        return chosen, t("gradescope.several_files", suffix=suffix, names=names, chosen=chosen.name)
    return None, ""


def _private_copy(
    folder: Path, path: Path, scan: UploadScan, private: Path, sidecar_names: Sequence[str] = ()
) -> Path | None:
    """Copy the picked file and its side files into a private folder, reading each without following
    links (nothing else of the upload comes along); the engine grades that copy.

    Args:
        folder: the upload's folder.
        path: the picked file.
        scan: the upload's scan.
        private: the private folder.
        sidecar_names: the names of the files beside `path` that its grading reads (the assignment's
            `sidecar_names`, for the picked file's stem); alone in the private folder, a name without
            the stem is its own too.

    Returns:
        The copy, or None (a file could not be read safely).
    """
    picked = path.relative_to(folder).as_posix()
    parent = picked.rpartition("/")[0]
    beside = [picked] + [
        n for n in scan.files if n.rpartition("/")[0] == parent and n.rpartition("/")[2] in sidecar_names
    ]
    try:
        for name in beside:
            write_new(private / name.rpartition("/")[2], read_beneath(folder, name))
    except UnsafeFile:
        return None
    return private / path.name


def environment_overrides(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """grader.yml overrides from the container's environment.

    AUTOGRADER_TRAIN=1 grades the training part; AUTOGRADER_TIMEOUT sets worker.timeout_s;
    AUTOGRADER_SET holds any keys as `KEY=VALUE` pairs separated by `;` (the CLI's `--set`, e.g.
    `training.profile=cpu`), which the named variables win over.

    Args:
        environ: the environment (None: os.environ).

    Returns:
        Dotted key -> value.

    Raises:
        ConfigError: an AUTOGRADER_SET pair is not KEY=VALUE with a YAML value.
    """
    environ = dict(os.environ if environ is None else environ)
    pairs = [pair.strip() for pair in environ.get("AUTOGRADER_SET", "").split(";") if pair.strip()]
    overrides: dict[str, Any] = grader_config.parse_settings(pairs)
    if environ.get("AUTOGRADER_TRAIN", "").strip():
        overrides["training.enabled"] = environ["AUTOGRADER_TRAIN"].strip().lower() in TRUE_WORDS
    if environ.get("AUTOGRADER_TIMEOUT", "").strip():
        overrides["worker.timeout_s"] = float(environ["AUTOGRADER_TIMEOUT"])
    return overrides


def upload_time(metadata_path: Path) -> SubmissionTime:
    """The submission time and due date Gradescope gives (unknown when its file is missing or unusable).

    Args:
        metadata_path: Gradescope's submission_metadata.json.

    Returns:
        The time; an unreadable file counts as unknown (graded on time, and the report says so).
    """
    try:
        return gradescope_time(metadata_path)
    except TimesError as error:
        print(f"submission time unknown: {error}", file=sys.stderr)  # stdout/stderr are for staff
        return SubmissionTime()


def grade_upload(
    submission_dir: Path, results_path: Path, config_path: Path | None = None, preferred: str = ""
) -> SubmissionResult:
    """Grade the upload, write Gradescope's results.json and print the report for staff (the late policy
    applied with the submission time and due date of Gradescope's submission_metadata.json beside the upload).

    Args:
        submission_dir: the folder Gradescope puts the upload in.
        results_path: where results.json goes.
        config_path: grader.yml (None: the project's).
        preferred: a notebook name to prefer among several.

    Returns:
        The result that was written.
    """
    config = grader_config.load_config(config_path, environment_overrides())
    assignment = assignment_of(config)  # this front end's one load, passed down
    # The assignment's data, bundled by build_zip --data and copied by setup.sh into the folder of
    # the upload's folder: its variable (assignment.yml `data:`) points there unless already set.
    bundled = bundled_data_of(config)
    if bundled is not None:
        os.environ.update(bundled.environment(submission_dir.parent, os.environ))
    # The student reads the upload notes and the results in grader.yml's language (and part titles).
    with use_language(config.feedback.language, assignment.messages_dir):
        scan = scan_upload(submission_dir)
        refused = [t("upload.not_read", name=name, reason=reason) for name, reason in scan.refused.items()]
        path, note = pick_submission(submission_dir, preferred, scan)
        with tempfile.TemporaryDirectory(prefix="gradescope-upload-") as private:
            sides = assignment.sidecar_names(config, path.stem) if path and assignment.sidecar_names else []
            copy = _private_copy(submission_dir, path, scan, Path(private), sides) if path is not None else None
            if copy is None:
                message, disabled = t("gradescope.no_notebook"), config.disabled_parts()
                result = missing_result("(no notebook)", config.parts, message, disabled, STATUS_UNREADABLE)
                result.load_problems += refused
            else:
                from autograder.engine import grade_submission  # heavy: only when there is a notebook

                submission = batch.expand_paths([copy])[0]
                grade_function = partial(grade_submission, assignment=assignment)
                result = batch.grade_all([submission], config, grade_function, None, jobs=1)[0]
                result.notes[:0] = [n for n in [note, *refused] if n]
        apply_late_policy(result, upload_time(submission_dir.parent / METADATA_NAME), config.late)
        results_path.parent.mkdir(parents=True, exist_ok=True)
        write_gradescope_results(result, results_path, config.parts, assignment_title(config.assignment.title))
        sys.stdout.write(render_report([result], config.parts, width=100))  # for staff (Gradescope hides stdout)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of `run_autograder`.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        0 when results.json was written.
    """
    args = parse_command("gradescope.run", argv, prog="python -m autograder.integrations.gradescope.run")
    prefer = os.environ.get("AUTOGRADER_NOTEBOOK", "") if args.prefer is None else args.prefer
    grade_upload(args.submission_dir, args.results, args.config, prefer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
