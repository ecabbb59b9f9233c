"""Run the hidden pytest suite against one student side and collect a verdict per check."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from autograder.checks.support import CONTEXT_PLUGIN, CheckContext, CheckFailed
from autograder.i18n import student_line

PROBE_NAME = re.compile(r"\bProbe([A-Z]\w*)")  # the assignments' stand-in classes (checks/probes.py)


@dataclass
class Verdict:
    """The outcome of one check."""

    passed: bool
    message: str = ""
    internal_error: str = ""  # grader-side failure (never shown as the student's fault)
    blocking: bool = False  # the student's code could not run at all (see CheckFailed)
    library_calls: tuple[str, ...] = ()  # watched library calls the worker recorded during the check


def explain_exception(error: BaseException, budget_s: float = 0.0) -> Verdict:
    """Turn an exception raised during a check into a failed verdict.

    Args:
        error: what the check raised.
        budget_s: the submission's time budget (for the message when it ran out).

    Returns:
        A verdict with the student's message; `internal_error` is set when the grader failed.
    """
    from autograder.i18n import t
    from autograder.sandbox import BudgetSpent, StudentError, WorkerFailure

    if isinstance(error, BudgetSpent):
        return Verdict(False, t("engine.budget_spent", budget=budget_s), blocking=True)
    if isinstance(error, CheckFailed):
        return Verdict(False, str(error), blocking=error.blocking)
    if isinstance(error, StudentError):
        where = f" ({student_line(error.where)})" if getattr(error, "where", "") else ""
        # A grader's stand-in (ProbeX, built where the student's class uses X) is called X, with why it is there.
        message = PROBE_NAME.sub(r"\1", error.message)
        text = t("engine.raised", exc_type=error.exc_type, message=message, where=where)
        if stand_ins := sorted(set(PROBE_NAME.findall(error.message))):
            text += " " + t("engine.raised_on_stand_in", names=", ".join(f"`{name}`" for name in stand_ins))
        return Verdict(False, text, blocking=True)
    if isinstance(error, WorkerFailure):
        return Verdict(False, t("engine.not_finished", reason=error.reason), blocking=True)
    return Verdict(False, t("engine.internal_error"), internal_error=f"{type(error).__name__}: {error}")


def _part_of(item: pytest.Item) -> str:
    """The part a declared check grades (autograder.checks.declared), else the check module it comes from."""
    if part := getattr(getattr(item, "function", None), "part", None):
        return str(part)
    module = getattr(item, "module", None)  # set on pytest.Function, which every check is
    return module.__name__ if module is not None else ""


# What a check's failure may raise: an error, or pytest's own outcomes (BaseExceptions too).
_VERDICTS = (Exception, pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception)


class _ContextPlugin:
    """Hands the grading context to the suite and records each check's verdict."""

    __name__ = CONTEXT_PLUGIN  # pluggy registers a plugin under its __name__: the suite's conftest looks it up

    def __init__(self, context: CheckContext, check_ids: list[str] | None, budget_s: float) -> None:
        self.context = context
        self.budget_s = budget_s
        self.check_ids = None if check_ids is None else set(check_ids)
        self.verdicts: dict[str, Verdict] = {}
        # Part (check module) -> message, once the student's code hung, crashed or ran out of
        # memory in it: the part's remaining checks fail at once with that reason instead of
        # paying a timeout and a worker restart each.
        self.stopped_parts: dict[str, str] = {}
        # A stop of the grading (a pool process's SIGTERM, Ctrl-C) that reached a check: pytest would
        # count it as that check's failure and run the rest; the session ends and it is raised again.
        self.stop: BaseException | None = None

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.stop = self.stop or excinfo.value  # Ctrl-C in the grader's own process: pytest ends the session

    @pytest.hookimpl(tryfirst=True)  # before the fixtures, which may call the student's code
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        getattr(self.context.student, "library_calls", set()).clear()
        message = self.stopped_parts.get(_part_of(item))
        if message is not None:
            raise CheckFailed(message, blocking=True)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if self.check_ids is None:
            return
        keep = [i for i in items if i.name.removeprefix("test_") in self.check_ids]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        from autograder.sandbox import WorkerFailure

        outcome = yield
        report = outcome.get_result()
        check_id = item.name.removeprefix("test_")
        if call.when == "call" and report.passed:
            self.verdicts.setdefault(check_id, Verdict(True))
        elif report.failed and call.excinfo is not None and not isinstance(call.excinfo.value, _VERDICTS):
            self.stop = call.excinfo.value
            item.session.shouldstop = "the grading was stopped"
        elif report.failed and call.excinfo is not None:
            self.verdicts[check_id] = explain_exception(call.excinfo.value, self.budget_s)
            if isinstance(call.excinfo.value, WorkerFailure):
                self.stopped_parts[_part_of(item)] = self.verdicts[check_id].message
        calls = tuple(sorted(getattr(self.context.student, "library_calls", ())))
        if calls and check_id in self.verdicts:
            self.verdicts[check_id] = replace(self.verdicts[check_id], library_calls=calls)


def run_checks(
    checks_dir: Path, context: CheckContext, check_ids: list[str] | None = None, budget_s: float = 0.0
) -> dict[str, Verdict]:
    """Run the hidden suite (or some of its checks) and return a verdict per check id.

    Args:
        checks_dir: the assignment's hidden-checks folder (`Assignment.checks_dir`).
        context: the student side, seed and caches.
        check_ids: check ids (test names without `test_`) to run; None runs all.
        budget_s: the submission's time budget the worker enforces (0: none), for messages.

    Returns:
        {check id: Verdict}; a check that was selected but did not run is absent.
    """
    if check_ids is not None and not check_ids:
        return {}
    plugin = _ContextPlugin(context, check_ids, budget_s)
    # unraisableexception and threadexception only turn exceptions raised where nobody catches them
    # (in __del__, in other threads) into pytest warnings, which no verdict reads; at the end of each
    # session they run a full gc.collect() each, about a CPU-second per submission once torch is loaded.
    disabled = ("cacheprovider", "randomly", "timeout", "unraisableexception", "threadexception")
    args = [str(checks_dir), "-q", "--rootdir", str(checks_dir), "-o", "addopts=", "-o", "python_files=test_*.py"]
    # --tb=no: pytest's report is discarded, and formatting a failed check's traceback parses its source.
    args += ["--no-header", "--tb=no", *(option for name in disabled for option in ("-p", f"no:{name}"))]
    # pytest's own report is noise here; the verdicts carry everything that matters.
    with contextlib.redirect_stdout(io.StringIO()), _torch_threads(CHECK_THREADS):
        pytest.main(args, plugins=[plugin])
    if plugin.stop is not None:
        raise plugin.stop
    return plugin.verdicts


# The checks' own torch work (reference outputs, comparisons) is on small tensors: with more than
# one intra-op thread the threads mostly wait for each other, which on a loaded machine costs
# several times the CPU of one thread (measured: 6-10x for the checks' linear and tril calls),
# and a batch already runs `jobs` gradings side by side.
CHECK_THREADS = 1


@contextlib.contextmanager
def _torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` torch intra-op threads in this process, then restore the count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
