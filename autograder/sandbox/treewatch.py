"""Memory limit for a worker's process tree: a watchdog sums resident memory over /proc, kills it past the limit."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections import defaultdict

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
POLL_S = 0.1


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """Returns: the fields of /proc/<pid>/stat from the state (field 3) on, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: parse after the last ")"
    return stat[stat.rfind(b")") + 2 :].split()


def _parent_map() -> dict[int, list[int]]:
    """Returns: parent pid -> child pids, for every process visible in /proc."""
    children: dict[int, list[int]] = defaultdict(list)
    for name in os.listdir("/proc"):
        fields = _stat_fields(name) if name.isdigit() else None  # None: gone meanwhile
        if fields is not None and len(fields) > 1:
            children[int(fields[1])].append(int(name))
    return children


def tree_pids(root: int) -> list[int]:
    """Args: a pid. Returns: it and all its descendants (orphans of a pid namespace stay inside,
    because they are re-parented to the namespace's pid 1, itself a descendant)."""
    children = _parent_map()
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def start_time(pid: int) -> str | None:
    """Returns: the process's start time (field 22 of stat), None when it is gone or a zombie."""
    fields = _stat_fields(pid)
    return None if fields is None or fields[0] in (b"Z", b"X") else fields[19].decode()


def snapshot(root: int) -> dict[int, str]:
    """Args: a pid. Returns: {pid: start time} of it and its descendants that are alive."""
    found = {pid: start_time(pid) for pid in tree_pids(root)}
    return {pid: started for pid, started in found.items() if started is not None}


def kill_members(members: dict[int, str]) -> None:
    """SIGKILL every process of a snapshot that is still the same process (checked through a pidfd,
    so a recycled pid is never hit). Killing the pid 1 of a worker's pid namespace ends every
    process in it, including ones forked after the snapshot and ones that cleared their
    parent-death signal.

    Args:
        members: from snapshot().
    """
    for pid, started in members.items():
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            continue  # gone
        try:
            if start_time(pid) == started:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass  # ended meanwhile, or not ours to signal
        finally:
            os.close(pidfd)


def kill_tree(root: int, rounds: int = 3) -> dict[int, str]:
    """Kill `root`, its process group and all its descendants, again while new ones appear
    (a fork race outside a pid namespace).

    Args:
        root: the worker's pid (also its process group id); rounds: snapshots at most.
    Returns:
        every process that was found (for wait_gone).
    """
    seen: dict[int, str] = {}
    for _ in range(rounds):
        members = {pid: started for pid, started in snapshot(root).items() if seen.get(pid) != started}
        if not members:
            break
        seen.update(members)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root, signal.SIGKILL)
        kill_members(members)
    return seen


def wait_gone(members: dict[int, str], timeout_s: float) -> list[int]:
    """Wait until every process of a snapshot has ended (the kernel tears a pid namespace down
    one process at a time; on a loaded machine that takes seconds).

    Args:
        members: from snapshot(); timeout_s: how long to wait at most.
    Returns:
        the pids still running at the end (empty when all are gone).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        alive = [pid for pid, started in members.items() if start_time(pid) == started]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)


def resident_bytes(pids: list[int]) -> int:
    """Args: pids. Returns: the memory they use together: the sum of their proportional set
    sizes (a page shared by n processes, e.g. after fork, counts 1/n in each), or of their
    resident set sizes where smaps_rollup cannot be read."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
                for line in handle:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) << 10
                        break
            continue
        except (OSError, IndexError, ValueError):
            pass
        total += _resident_set_size(pid)
    return total


def _resident_set_size(pid: int) -> int:
    """Args: a pid. Returns: its resident set size in bytes (statm), 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return 0


def resident_set_bytes(pids: list[int]) -> int:
    """Args: pids. Returns: the sum of their resident set sizes (statm), an upper bound of
    `resident_bytes` (a page shared by n processes counts fully in each) that the kernel gives
    without walking the page tables, as reading smaps_rollup does."""
    return sum(_resident_set_size(pid) for pid in pids)


class TreeMemoryWatch:
    """Kills a process group when the resident memory of the tree under `root` exceeds a limit."""

    def __init__(self, root: int, limit_mb: int, poll_s: float = POLL_S) -> None:
        """Args: root pid (also the process group id to kill); limit in MB; polling interval."""
        self.root, self.limit_mb, self.poll_s = root, limit_mb, poll_s
        self.peak_mb = 0
        self.tripped = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"tree-memory-{root}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        limit = self.limit_mb << 20
        while not self._stop.wait(self.poll_s):
            pids = tree_pids(self.root)
            # The proportional sizes (smaps_rollup) decide, but reading them walks every page table
            # of the tree ten times a second: for a training worker a third of a core in the kernel,
            # taken from the training beside it. Their sum never exceeds that of the resident sizes,
            # so it is read only when the cheap bound is over the limit: the same kills as before.
            used = resident_set_bytes(pids)
            if used > limit:
                used = resident_bytes(pids)
            self.peak_mb = max(self.peak_mb, used >> 20)  # at or under the limit: the upper bound
            if used > limit:
                self.tripped = True
                kill_tree(self.root)  # the namespace's pid 1 among them: that ends the rest
                return

    def stop(self) -> None:
        """End the watch (the process is gone or being killed)."""
        self._stop.set()
