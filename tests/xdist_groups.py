"""Which tests share a pytest-xdist worker, so that each expensive session fixture is built once per run."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Session fixtures that cost minutes to build, most expensive first. Under pytest-xdist
# (`-n 2 --dist loadgroup`, as .ci/run runs the tiers) a session fixture is built once per worker
# that needs it, so every test using one of these runs in the same group (one worker): each is
# built once per run. A new test that reads the soundness corpus just asks for `corpus_run`.
SHARED_ONCE_FIXTURES = ("reference_cpu_run", "corpus_run", "autograder_zip", "assign_out", "graded_examples")
# Files whose tests take minutes without a shared fixture (gradings of many generated notebooks,
# a full training through the engine, real-notebook batches killed and resumed). The scheduler
# hands them out right after the shared groups: started last, one of them would stretch the tier's
# tail while the other worker idles.
LONG_GROUPS = (
    "tests/assignments/transformer_mt/test_training_part.py",
    "tests/assignments/test_credit_own_code.py",
    "tests/soundness/test_degenerate_answers.py",
    "tests/assignments/attention_encoder/test_part1_degenerate_answers.py",
    "tests/autograder/test_batch_resume.py",
    "tests/autograder/integrations/classroom50/test_classroom50_autograder.py",
    "tests/autograder/integrations/classroom50/test_classroom50_student_run.py",
)
# Files handed out among the shared groups, right after the group named: Part 2's soundness corpus
# graded cold (with the environment-touching submissions, about 760 s of a CI run's 3 workers on
# 2 cores, the tier's longest group) runs beside `corpus_run`'s worker from the start; handed out
# after the shared groups, it would start once one of them ended and finish last.
HANDED_OUT_AFTER = {"corpus_run": ("tests/soundness/test_cold_is_golden.py",)}
# workerinput key naming the folder where each worker writes the groups of the tests it collected.
GROUPS_DIR_KEY = "fixture_groups_dir"


def xdist_group_of(nodeid: str, fixturenames: list[str] | tuple[str, ...]) -> str:
    """The xdist group of a test: the first expensive session fixture it uses, else its file.

    Grouping the other tests by file keeps each module-scoped fixture (e.g. the attack corpus
    graded as root and as non-root) on one worker too.

    Args:
        nodeid: the test's pytest node id (`path::name[params]`).
        fixturenames: the fixtures the test uses, directly or through other fixtures.

    Returns:
        The group's name.
    """
    shared = [name for name in SHARED_ONCE_FIXTURES if name in fixturenames]
    return shared[0] if shared else nodeid.split("::", 1)[0]


def group_rank(group: str, tests: int) -> tuple[int, int]:
    """Sort key of a group in the scheduler's queue: shared fixtures, then long files, then by size.

    Args:
        group: the group's name (`xdist_group_of`).
        tests: how many tests it holds.

    Returns:
        A key; smaller is handed out earlier.
    """
    shared = [g for name in SHARED_ONCE_FIXTURES for g in (name, *HANDED_OUT_AFTER.get(name, ()))]
    ordered = (*shared, *LONG_GROUPS)
    return (ordered.index(group), 0) if group in ordered else (len(ordered), -tests)


def write_groups(groups_dir: Path, worker_id: str, groups: dict[str, str]) -> None:
    """Write one worker's {node id: group} table where the controller's scheduler reads it.

    Args:
        groups_dir: the folder the controller named in the worker's input.
        worker_id: the worker's id (gw0, gw1, ...).
        groups: each collected test's node id and its group.
    """
    part = groups_dir / f"{worker_id}.json.part"
    part.write_text(json.dumps(groups))
    part.replace(groups_dir / f"{worker_id}.json")  # the scheduler never reads half a file


def read_groups(groups_dir: Path) -> dict[str, str]:
    """Every worker's {node id: group} table, merged (all workers collect the same tests)."""
    groups: dict[str, str] = {}
    for path in sorted(groups_dir.glob("*.json")):
        groups.update(json.loads(path.read_text()))
    return groups


def make_fixture_group_scheduler(config: Any, log: Any, groups_dir: Path) -> Any:
    """pytest-xdist's `loadgroup` scheduler, grouping by the tables the workers wrote.

    pytest-xdist 3.8 reads a test's `xdist_group` mark by appending the group to the item's
    `_nodeid`; pytest 9 derives `nodeid` from another attribute, so the group never reaches the
    scheduler and every test is scheduled on its own (an expensive session fixture was then built
    on both workers). This scheduler takes each test's group from the table its worker wrote at
    collection (`write_groups`), which needs nothing from pytest's internals.

    Args:
        config: the controller's pytest config.
        log: the scheduler's log producer, as pytest-xdist passes it.
        groups_dir: where the workers write their tables.

    Returns:
        A `LoadScopeScheduling` whose work units are the groups.
    """
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class FixtureGroupScheduling(LoadScopeScheduling):
        """Whole groups go to one worker, the costliest first; a worker queues one group ahead at most."""

        _groups: dict[str, str] | None = None
        _ranked = False

        def _assign_work_unit(self, node: Any) -> None:
            if not self._ranked:  # the queue is complete once schedule() hands out the first unit
                ranked = sorted(self.workqueue.items(), key=lambda unit: group_rank(unit[0], len(unit[1])))
                self.workqueue.clear()
                self.workqueue.update(ranked)
                self._ranked = True
            super()._assign_work_unit(node)

        def _reschedule(self, node: Any) -> None:
            # LoadScopeScheduling queues another group on a worker once it has 2 tests or fewer
            # left, so a worker still busy for minutes with its last two tests holds a group the
            # idle worker could run. A worker runs its last test only once it has a next one (or is
            # told to stop), so it is handed a group when it has one test left.
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

        def _split_scope(self, nodeid: str) -> str:
            # Called only once every worker has finished collecting (schedule() and later).
            if self._groups is None:
                self._groups = read_groups(groups_dir)
            return self._groups.get(nodeid) or nodeid.split("::", 1)[0]

    return FixtureGroupScheduling(config, log)


def groups_of(items: Iterable[Any]) -> dict[str, str]:
    """Each collected pytest item's node id and its group.

    A file goes whole into the group of the costliest shared fixture any of its tests uses
    (`xdist_group_of`): its other tests may share a module-scoped fixture with those (e.g. the
    Gradescope results of the examples), which a split would build on both workers.

    Args:
        items: the collected items.

    Returns:
        Node id -> group.
    """
    items = list(items)
    by_file: dict[str, str] = {}
    for item in items:
        file = item.nodeid.split("::", 1)[0]
        group = xdist_group_of(item.nodeid, getattr(item, "fixturenames", ()))
        known = by_file.get(file, file)
        ranked = [name for name in SHARED_ONCE_FIXTURES if name in (group, known)]
        by_file[file] = ranked[0] if ranked else file
    return {item.nodeid: by_file[item.nodeid.split("::", 1)[0]] for item in items}
