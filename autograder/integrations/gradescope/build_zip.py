"""Build the Gradescope autograder zip: setup.sh and run_autograder at its root, the grader beside them."""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Sequence
from pathlib import Path

from autograder.assignment_folder import (
    ASSIGNMENTS_DIR,
    GRADER_FILE,
    AssignmentError,
    grader_yml_of,
    read_bundled_data,
    read_manifest,
    shipped_files,
)
from autograder.assignment_folder import PROJECT_ROOT as ROOT
from autograder.cli_table import parse_command
from autograder.config import load_config
from autograder.exit_codes import command_error

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = ROOT / "dist" / "gradescope-autograder.zip"
# What Gradescope's image build needs besides the assignment's grader items (its manifest).
INSTALL_FILES = ("requirements.lock", "pyproject.toml")
ENTRY_POINTS = ("setup.sh", "run_autograder")  # Gradescope looks for these at the root
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # same bytes for the same sources


def zip_entries(data_dir: Path | None = None, assignment: str | None = None) -> list[tuple[str, Path]]:
    """What goes into the zip: (name in the zip, file on disk), sorted by name.

    Args:
        data_dir: a folder of the assignment's data to bundle where its assignment.yml `data:`
            says (None: none; grading then finds the data its own way).
        assignment: whose manifest names the grader's folders and files (None: grader.yml's).

    Returns:
        The entries.

    Raises:
        AssignmentError: data to bundle, and the assignment declares none (assignment.yml `data:`).
    """
    name = assignment or load_config().assignment_name()
    entries = [(entry, HERE / entry) for entry in ENTRY_POINTS]
    entries += [(entry, ROOT / entry) for entry in INSTALL_FILES]
    for item in read_manifest(ASSIGNMENTS_DIR / name).grader:
        if (ROOT / item).is_dir():
            entries += [(path.relative_to(ROOT).as_posix(), path) for path in shipped_files(ROOT / item)]
        elif item == GRADER_FILE:  # the zip's grader.yml is the graded assignment's (the project's by default)
            entries.append((item, grader_yml_of(name)))
        else:
            entries.append((item, ROOT / item))
    if data_dir is not None:
        data = read_bundled_data(ASSIGNMENTS_DIR / name)
        if data is None:
            raise AssignmentError("assignment_error.no_data", name=repr(name))
        for path in sorted(Path(data_dir).iterdir()):
            if path.is_file() and (not data.files or path.name.split(".")[0] in data.files):
                entries.append((f"{data.bundled}/{path.name}", path))
    return sorted(entries)


def build_zip(out: Path = DEFAULT_OUT, data_dir: Path | None = None, assignment: str | None = None) -> Path:
    """Write the zip (deterministic: fixed timestamps, sorted entries; scripts executable).

    Args:
        out: the zip to write; its folder is created.
        data_dir: the assignment's data folder to bundle, or None.
        assignment: the assignment whose grader items ship (None: the one grader.yml names).

    Returns:
        The zip's path.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, path in zip_entries(data_dir, assignment):
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            executable = name in ENTRY_POINTS or name.endswith(".sh")
            info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m autograder.integrations.gradescope.build_zip [--out ZIP] [--data DIR]`.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        The exit code.
    """
    args = parse_command("gradescope.build_zip", argv, prog="python -m autograder.integrations.gradescope.build_zip")
    if args.data is not None and not args.data.is_dir():
        return command_error(f"--data {args.data}: no such folder")
    try:
        out = build_zip(args.out or DEFAULT_OUT, args.data, args.assignment)
    except AssignmentError as error:
        return command_error(error)
    print(f"{out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
