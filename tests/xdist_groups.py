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
        """Whole groups go to one worker; the biggest groups are handed out first."""

        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            # Called only once every worker has finished collecting (schedule() and later).
            if self._groups is None:
                self._groups = read_groups(groups_dir)
            return self._groups.get(nodeid) or nodeid.split("::", 1)[0]

    return FixtureGroupScheduling(config, log)


def groups_of(items: Iterable[Any]) -> dict[str, str]:
    """Each collected pytest item's node id and its group (`xdist_group_of`)."""
    return {item.nodeid: xdist_group_of(item.nodeid, getattr(item, "fixturenames", ())) for item in items}
