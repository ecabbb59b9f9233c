"""Lenient submission check for `otter run` when the autograder grades with this project's Otter plugin."""

# Otter 7's PythonRunner.run calls validate_submission before it loads any plugin: nbformat.read
# and Otter's metadata schema, which reject a byte-order mark, a cell without `metadata` and a
# `metadata.otter` that is not a valid mapping. The zip's run_otter.py (Gradescope, `otter grade`)
# never lets Otter see the upload, and the engine grades the original bytes on every path, so only
# the bare `otter run` stopped at Otter's reader. autograder/integrations/otter_hook.py (the .pth
# the installed project puts in site-packages) calls patch_python_runner when Otter's runner module
# is loaded. The patched method keeps Otter's own check for every autograder that does not name
# this project's plugin; for one that does, it reads the notebook leniently (no link followed,
# byte-order mark dropped, nothing validated) and keeps only Otter's assignment-name check, with
# the name taken from `metadata.otter.assignment_name` when that is a string. Whether the file is
# a gradable notebook is then the engine's call, as on the other paths.

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.integrations.upload_guard import UnsafeFile, read_beneath

ENGINE_PLUGIN = "autograder.otter_bridge.EnginePlugin"  # the name otter_config.json lists it by
PATCHED_MARK = "_lenient_for_engine_plugin"


def uses_engine_plugin(plugins: Any) -> bool:
    """Whether an Otter config's `plugins` names this project's plugin.

    Args:
        plugins: the config's `plugins` value: a list of names and one-key {name: options} mappings.

    Returns:
        True when one entry is the engine plugin.
    """
    if not isinstance(plugins, list):
        return False
    return any(ENGINE_PLUGIN in (list(entry) if isinstance(entry, dict) else [entry]) for entry in plugins)


def assignment_name(data: bytes) -> str | None:
    """A notebook's `metadata.otter.assignment_name` when it is a string, else None (not JSON, a
    byte-order mark, any part of the path missing or of another type: nothing raises).

    Args:
        data: the notebook file's bytes.

    Returns:
        The name, or None.
    """
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    metadata = document.get("metadata") if isinstance(document, dict) else None
    otter = metadata.get("otter") if isinstance(metadata, dict) else None
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    return name if isinstance(name, str) else None


def validate_leniently(runner: Any, submission_path: str) -> None:
    """Otter's assignment-name check on a notebook read without Otter's reader.

    Args:
        runner: Otter's PythonRunner (its `validate_assignment_name` raises on a mismatch).
        submission_path: the file Otter chose, relative to the submission folder (the cwd).
    """
    if os.path.splitext(submission_path)[1] != ".ipynb":
        return
    path = Path(os.path.abspath(submission_path))
    try:
        data = read_beneath(path.parent, path.name)
    except UnsafeFile:  # a link or special file: the plugin refuses it and reports why
        data = b""
    runner.validate_assignment_name(assignment_name(data))


def patch_python_runner(module: ModuleType) -> None:
    """Make `PythonRunner.validate_submission` lenient for autograders that use the engine plugin
    (idempotent; Otter's method, unchanged, for every other autograder).

    Args:
        module: Otter's `otter.run.run_autograder.runners.python_runner`, just loaded.
    """
    runner_class = module.PythonRunner
    original = runner_class.validate_submission
    if getattr(original, PATCHED_MARK, False):
        return

    @functools.wraps(original)
    def validate_submission(self: Any, submission_path: str) -> None:
        if uses_engine_plugin(getattr(self.ag_config, "plugins", None)):
            validate_leniently(self, submission_path)
        else:
            original(self, submission_path)

    setattr(validate_submission, PATCHED_MARK, True)
    runner_class.validate_submission = validate_submission
