"""Packaging hooks: every wheel of the project (regular and editable) carries the Otter start-up hook."""

# The metadata lives in pyproject.toml; this file only adds build commands. The .pth and the
# module it imports (autograder/integrations/otter_hook.py, installed as a top-level module) must
# sit in site-packages itself, where `site` reads .pth files at start-up (before an editable
# install's finder may be in place): a regular wheel gets them from build_py (the build folder's
# root is the wheel's root), an editable one (`pip install -e .`, `make setup`) from the editable
# strategy, which writes that wheel's root.

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

HOOK_SOURCE = Path(__file__).resolve().parent / "autograder" / "integrations" / "otter_hook.py"


def otter_hook_files() -> dict[str, bytes]:
    """The files for site-packages' root: the .pth and the hook module (loaded by path: stdlib only)."""
    spec = importlib.util.spec_from_file_location("otter_hook_for_build", HOOK_SOURCE)
    assert spec is not None and spec.loader is not None, HOOK_SOURCE
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {module.PTH_NAME: module.pth_text().encode("ascii"), f"{module.HOOK_NAME}.py": HOOK_SOURCE.read_bytes()}


class BuildPyWithHook(build_py):
    """build_py that also writes the hook files into the build folder's root (the wheel's root)."""

    def run(self) -> None:
        super().run()
        for name, data in otter_hook_files().items():
            (Path(self.build_lib) / name).write_bytes(data)


class _StrategyWithHook:
    """An editable-install strategy that also writes the hook files into the editable wheel's root."""

    def __init__(self, strategy: Any) -> None:
        self.strategy = strategy

    def __enter__(self) -> _StrategyWithHook:
        self.strategy.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self.strategy.__exit__(*exc)

    def __call__(self, wheel: Any, files: list[str], mapping: Any) -> None:
        self.strategy(wheel, files, mapping)
        for name, data in otter_hook_files().items():
            wheel.writestr(name, data)


class EditableWheelWithHook(editable_wheel):
    """editable_wheel whose strategy (a .pth or a finder pointing at the checkout) adds the hook."""

    def _select_strategy(self, name: str, tag: str, build_lib: Any) -> Any:
        return _StrategyWithHook(super()._select_strategy(name, tag, build_lib))


setup(cmdclass={"build_py": BuildPyWithHook, "editable_wheel": EditableWheelWithHook})
