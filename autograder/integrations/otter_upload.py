"""Take an Otter upload out of Otter's reach: a private copy for the engine, a blank notebook for Otter."""

# Otter reads and executes what lies in <autograder>/submission: it unpickles `.OTTER_LOG`, parses
# the notebook (and aborts on files the engine reads fine), starts its kernel there with the
# folder on the import path. So before Otter looks (the zip's run_otter.py on Gradescope and in
# `otter grade`) or at the latest before it unpickles or executes anything (the plugin's
# `before_grading` under `otter run`), the upload's top-level regular files are copied to a
# private folder, everything the student put in the submission folder is deleted, and a blank
# notebook under the submission's name is left for Otter. The engine grades the private copy.

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.i18n import t
from autograder.integrations.upload_guard import UnsafeFile, read_beneath, scan_upload, write_new

UPLOAD_DIR = "upload"  # <autograder>/upload, made by run_otter.py before Otter starts
MANIFEST = "quarantine.json"  # in that folder: the graded file's name and the refused entries
TEMP_PREFIX = "otter-upload-"  # + the owner's pid + "-": `otter run`'s temporary quarantine folders
BLANK_NOTE = "Graded by the course's engine; Otter does not execute this notebook."


@dataclass
class Quarantine:
    """A private copy of an upload: the file to grade (or None) and what was not taken, with why."""

    folder: Path
    submission: Path | None
    refused: dict[str, str] = field(default_factory=dict)
    # Set when the copy lies in a temporary folder of its own (`otter run`): removes that folder,
    # at the latest when the process exits (also after an uncaught exception).
    cleanup: weakref.finalize[Any, Any] | None = None

    def remove(self) -> None:
        """Delete the temporary folder holding the copy (nothing for run_otter.py's folder)."""
        if self.cleanup is not None:
            self.cleanup()

    def notes(self) -> list[str]:
        """One line per refused entry, for the student's report."""
        return [t("upload.not_read", name=name, reason=reason) for name, reason in self.refused.items()]


def blank_notebook_bytes() -> bytes:
    """A valid nbformat 4 notebook with one markdown cell (what Otter executes instead of the upload)."""
    notebook = {
        "cells": [{"cell_type": "markdown", "id": "engine-note", "metadata": {}, "source": BLANK_NOTE}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook).encode("utf-8")


def pick_submission(files: list[str]) -> str | None:
    """Otter's choice among top-level files: the .ipynb, else a .py script (first by name when several)."""
    top = [name for name in files if "/" not in name]
    for suffix in (".ipynb", ".py"):
        found = sorted(n for n in top if n.endswith(suffix) and n != "__init__.py")
        if found:
            return found[0]
    return None


def _remove(path: str | Path) -> None:
    """Delete a file, link or folder if there is one, never following a link (rmtree unlinks them)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def quarantine(submission_dir: Path, destination: Path, chosen: str = "", keep: tuple[str, ...] = ()) -> Quarantine:
    """Copy an upload's top-level regular files to `destination` and empty the submission folder.

    Args:
        submission_dir: Otter's submission folder.
        destination: a new private folder (created here, mode 0700; must not exist).
        chosen: the file Otter chose to grade ("" = choose as Otter does).
        keep: entries of the submission folder Otter itself put there (left in place).

    Returns:
        The quarantine; the chosen file's name now holds a blank notebook (or an empty script).
    """
    scan = scan_upload(submission_dir)
    destination.mkdir(mode=0o700)
    refused = {name: reason for name, reason in scan.refused.items() if name.split("/")[0] not in keep}
    taken: list[str] = []
    for name in scan.files:
        if "/" in name:  # the engine needs the notebook and the checkpoint beside it, nothing else
            continue
        try:
            write_new(destination / name, read_beneath(submission_dir, name))
            taken.append(name)
        except UnsafeFile:  # changed between the scan and the read (a race): refused, said in the catalogue's words
            refused[name] = t("upload.unreadable")
    if chosen:  # Otter's choice stands: never grade another file in its place
        picked = chosen if chosen in taken else None
        if picked is None and chosen not in refused:
            refused[chosen] = t("upload.unreadable")
    else:
        picked = pick_submission(taken)
    for entry in os.scandir(submission_dir):
        if entry.name not in keep:
            _remove(entry.path)
    # Otter needs a file to "execute" even when there is nothing to grade (the plugin then reports why).
    placeholder = chosen or picked or "submission.ipynb"
    write_new(submission_dir / placeholder, b"" if placeholder.endswith(".py") else blank_notebook_bytes())
    result = Quarantine(destination, destination / picked if picked else None, refused)
    (destination / MANIFEST).write_text(
        json.dumps({"submission": picked, "placeholder": placeholder, "refused": refused}), encoding="utf-8"
    )
    return result


def load_prepared(autograder_dir: Path) -> Quarantine | None:
    """The quarantine run_otter.py made before Otter started, or None when there is none (`otter run`)."""
    folder = autograder_dir / UPLOAD_DIR
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    os.close(fd)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    picked = manifest.get("submission")
    return Quarantine(folder, folder / picked if picked else None, dict(manifest.get("refused") or {}))


def quarantine_for_plugin(submission_path: Path, autograder_dir: Path | None) -> Quarantine:
    """The plugin's view of the upload: run_otter.py's quarantine, else one made now, in a private
    temporary folder, keeping Otter's own `tests/` in the submission folder.

    Args:
        submission_path: the file Otter chose (absolute).
        autograder_dir: Otter's autograder folder (None: unknown).

    Returns:
        The quarantine.
    """
    prepared = load_prepared(autograder_dir) if autograder_dir else None
    if prepared is not None:
        return prepared
    remove_orphaned_copies()
    private = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
    try:
        made = quarantine(submission_path.parent, private / UPLOAD_DIR, submission_path.name, keep=("tests",))
        write_new(submission_path.parent / "__init__.py", b"")  # Otter made one; the student may have filled it
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)
        raise
    # runs on remove(), when the quarantine is collected, or at interpreter exit
    made.cleanup = weakref.finalize(made, shutil.rmtree, str(private), True)
    return made


def remove_orphaned_copies() -> list[Path]:
    """Delete the temporary quarantine folders of this user's processes that ended without
    removing theirs (killed): their names carry the process id.

    Returns:
        The folders removed.
    """
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*-*"):
        owner_pid = folder.name[len(TEMP_PREFIX) :].split("-", 1)[0]
        try:
            if not owner_pid.isdigit() or folder.is_symlink() or folder.stat().st_uid != os.geteuid():
                continue
            os.kill(int(owner_pid), 0)  # alive: its owner removes it
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        except OSError:
            continue  # alive under another user, or gone meanwhile
    return removed


def prepare_autograder(autograder_dir: Path) -> Quarantine:
    """Before Otter starts (the zip's run_otter.py): quarantine <autograder>/submission.

    Args:
        autograder_dir: Otter's autograder folder (/autograder on Gradescope).

    Returns:
        The quarantine, also recorded for the plugin in <autograder>/upload.
    """
    _remove(autograder_dir / UPLOAD_DIR)  # a stale one
    return quarantine(autograder_dir / "submission", autograder_dir / UPLOAD_DIR)
