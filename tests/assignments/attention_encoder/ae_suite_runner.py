"""Run Part 1's hidden checks against a student side and collect a verdict per check id.

The engine does the same through its runner once the assignment folder is wired in; this
stand-alone copy keeps the tests independent of that wiring.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from autograder import credit
from autograder.assignment_folder import read_settings
from autograder.checks.support import CheckContext
from autograder.config.sections import PartConfig
from autograder.runner import Verdict

REPO = Path(__file__).resolve().parents[3]
ASSIGNMENT = REPO / "assignments" / "attention_encoder"
CHECKS_DIR = ASSIGNMENT / "checks"
CONTEXT_PLUGIN = "autograder-check-context"


def parts() -> dict[str, dict[str, Any]]:
    """assignment.yml's parts (the credit rule of declared parts filled in, as the engine reads them)."""
    result: dict[str, dict[str, Any]] = read_settings(ASSIGNMENT)["parts"]
    return result


class _Collect:
    def __init__(self, context: CheckContext, calls: dict[str, tuple[str, ...]]) -> None:
        self.context = context
        self.verdicts: dict[str, str | None] = {}  # check id -> None (passed) or the message
        self.calls = calls  # check id -> the watched library calls the worker recorded during it

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        getattr(self.context.student, "library_calls", set()).clear()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        report = outcome.get_result()
        check_id = item.name.removeprefix("test_")
        recorded = getattr(self.context.student, "library_calls", None)
        if recorded:
            self.calls[check_id] = tuple(sorted(recorded))
        if call.when == "call" and report.passed:
            self.verdicts.setdefault(check_id, None)
        elif report.failed and call.excinfo is not None:
            self.verdicts[check_id] = f"{type(call.excinfo.value).__name__}: {call.excinfo.value}"


class _Register:
    def __init__(self, plugin: _Collect) -> None:
        self.plugin = plugin

    def pytest_configure(self, config: pytest.Config) -> None:
        config.pluginmanager.register(self.plugin, CONTEXT_PLUGIN)


def run_suite(student: Any, seed: int = 0, calls: dict[str, tuple[str, ...]] | None = None) -> dict[str, str | None]:
    """Every hidden check of Part 1 on one student side.

    Args:
        student: an object with the worker's request interface.
        seed: the grading seed.
        calls: filled with check id -> the library calls a watching worker recorded during it.

    Returns:
        check id -> None when it passed, else the failure message.
    """
    plugin = _Collect(CheckContext(student=student, seed=seed), {} if calls is None else calls)
    args = [str(CHECKS_DIR), "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts="]
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(args, plugins=[_Register(plugin)])
    return plugin.verdicts


def points(verdicts: dict[str, str | None], calls: dict[str, tuple[str, ...]] | None = None) -> dict[str, float]:
    """Points per part as the engine pays them (the credit rule of autograder.credit, with the
    library calls recorded per check; training excluded: it is not a check of the suite)."""
    as_verdicts = {
        check: Verdict(message is None, message or "", library_calls=(calls or {}).get(check, ()))
        for check, message in verdicts.items()
    }
    paid = {}
    for name, raw in parts().items():
        if name == "training":
            continue
        part = PartConfig.model_validate(raw)
        credited = credit.credited(part, as_verdicts)
        paid[name] = float(sum(p for check, p in part.checks.items() if (v := credited.get(check)) and v.passed))
    return paid
