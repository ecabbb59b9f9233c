"""Startup hook that lets autograder.integrations.otter_compat adjust Otter's runner when `otter run` loads it."""

# Why: `otter run` (Otter 7's PythonRunner.run) parses the submission with nbformat and Otter's
# notebook-metadata schema before it loads any plugin, so a notebook the engine grades (a
# byte-order mark, a cell without `metadata`, an odd `metadata.otter`) stops Otter with no
# results. Otter has no earlier hook, so installing the project (`pip install .`, `make setup`)
# puts this file into site-packages as the top-level module `autograder_otter_hook`, with a
# .pth file (`pth_text()`) that imports it at interpreter start-up and calls install(): a finder
# first on sys.meta_path that ignores every import but Otter's runner module and, once that module
# is loaded, hands it to otter_compat (setup.py writes both files into every wheel's root).
#
# It runs inside `site`, in every interpreter of the environment, so it imports nothing but `sys`
# (`importlib.util` and the project only when Otter's runner is imported): one small cached module
# and a list insert. Interpreters without the script's folder on sys.path (`python -I` or `-P`: the
# sandboxed worker) skip it in the .pth line itself, and the worker's bootstrap drops the finder too.

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's own flag would import typing at every interpreter start
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

PTH_NAME = "autograder_otter_hook.pth"
HOOK_NAME = "autograder_otter_hook"  # this file's name as installed into site-packages
RUNNER_MODULE = "otter.run.run_autograder.runners.python_runner"
PATCH_MODULE = "autograder.integrations.otter_compat"


def _patch(module: ModuleType) -> None:
    """Let otter_compat adjust Otter's freshly loaded runner module; never break Otter doing so."""
    try:
        compat = __import__(PATCH_MODULE, fromlist=["patch_python_runner"])
    except ImportError:  # the project is not importable here (e.g. an engine without otter_compat)
        return
    try:
        compat.patch_python_runner(module)
    except Exception as error:  # without the patch Otter behaves exactly as it always has
        sys.stderr.write(f"{HOOK_NAME}: Otter's runner left unchanged ({type(error).__name__}: {error})\n")


class OtterRunnerHook:
    """Meta-path finder that acts only on Otter's Python runner module; every other import passes by."""

    is_otter_runner_hook = True  # how install() recognises an installed hook

    def __init__(self) -> None:
        self.searching = False

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The runner module's spec as the other finders give it, with a loader that patches the
        module after executing it; None for every other module (the other finders decide).

        Args:
            name: the module being imported.
            path: the parent package's path (unused: the other finders are asked by name).
            target: unused (reloads).

        Returns:
            The runner module's spec, or None.
        """
        if name != RUNNER_MODULE or self.searching:
            return None
        import importlib.util

        self.searching = True  # importlib.util.find_spec asks sys.meta_path, this finder included
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.searching = False
        loader = spec.loader if spec is not None else None
        execute = getattr(loader, "exec_module", None)
        if spec is None or execute is None:
            return spec

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _patch(module)

        # This loader instance loads only this module (setattr: mypy forbids assigning to a method).
        setattr(loader, "exec_module", exec_module)  # noqa: B010
        return spec


def install() -> None:
    """Put the hook first on sys.meta_path: once, and never under `python -I` or `-P`."""
    if sys.flags.safe_path or any(getattr(f, "is_otter_runner_hook", False) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, OtterRunnerHook())


def pth_text() -> str:
    """The .pth file's text: a comment and one line that imports the installed hook module and
    calls install(), except under `python -I` or `-P` (ASCII: Python 3.11 reads .pth files in the locale's
    encoding).

    Returns:
        The text setup.py writes into the wheel's root (site-packages once installed).
    """
    return (
        "# autograder: lets `otter run` grade notebooks Otter's reader rejects when the\n"
        f"# autograder uses this project's plugin (see {HOOK_NAME}.py beside this file).\n"
        f"import sys; sys.flags.safe_path or __import__({HOOK_NAME!r}).install()\n"
    )
