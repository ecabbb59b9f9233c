"""Benchmark: the memory room a notebook's sandboxed workers had under their memory rlimit, warm start vs cold.

Grades one notebook's unit parts in a child process per start mode (each its own zygote) and, from
outside the sandbox, follows each of its descendants that runs as a sandbox uid: its VmPeak (the largest virtual size
it reached, what RLIMIT_AS counts; kept by the kernel, so polling misses no peak of a process
still alive at the next poll) and VmHWM (its peak resident memory). Root only (the root jail's
fresh uids).

    .venv/bin/python bench/worker_memory.py examples/correct_original_format.ipynb
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
FRESH_UID_BASE = 1 << 20  # plan.FRESH_UID_BASE: the root jail's workers run as fresh uids from here
POLL_S = 0.02


def _status_mb(pid: str) -> tuple[int, dict[str, int]] | None:
    """Returns: (the process's real uid, {VmPeak, VmHWM, rlimit_as} in MB), or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
        limits = Path(f"/proc/{pid}/limits").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        uid = int(fields["Uid"].split()[0])
        found: dict[str, int] = {k: int(fields[k].split()[0]) >> 10 for k in ("VmPeak", "VmHWM") if k in fields}
    except (KeyError, ValueError):
        return None
    for line in limits.splitlines():  # "Max address space  <soft> <hard> bytes"
        if line.startswith("Max address space") and line.split()[3].isdigit():
            found["rlimit_as"] = int(line.split()[3]) >> 20
    return uid, found


def _follow(peaks: dict[str, int], stop: threading.Event) -> None:
    """Poll this process's sandboxed descendants until `stop`; keep the largest figures seen."""
    import psutil

    me = psutil.Process()
    while not stop.is_set():
        for child in me.children(recursive=True):  # the zygote's forks too: it is a child of this process
            found = _status_mb(str(child.pid))
            if found is not None and found[0] >= FRESH_UID_BASE:
                for key, value in found[1].items():
                    peaks[key] = max(peaks.get(key, 0), value)
        time.sleep(POLL_S)


def measure(notebook: Path, warm: bool, memory_mb: int) -> dict[str, object]:
    """In this process: grade the notebook's unit parts and follow its workers' memory.

    Args:
        notebook: the submission; warm: worker.warm_start; memory_mb: worker.memory_mb.
    Returns:
        the peaks, the rlimit the workers had and the room it left, the points.
    """
    sys.path.insert(0, str(REPO_ROOT))
    from autograder.assignment import assignment_of
    from autograder.config import load_config
    from autograder.engine import grade_submission
    from autograder.sandbox import warm as warm_start

    config = load_config(None, {"worker.warm_start": warm, "worker.memory_mb": memory_mb})
    peaks: dict[str, int] = {}
    stop = threading.Event()
    follower = threading.Thread(target=_follow, args=(peaks, stop), daemon=True)
    follower.start()
    began = time.monotonic()
    result = grade_submission(notebook, config, assignment=assignment_of(config))
    seconds = time.monotonic() - began
    stop.set()
    follower.join()
    rlimit = peaks.get("rlimit_as", 0)
    return {
        "start": "warm" if warm_start._zygotes else "cold",
        "memory_mb": memory_mb,
        "rlimit_mb": rlimit,
        "preload_allowance_mb": rlimit - memory_mb,
        "peak_virtual_mb": peaks.get("VmPeak"),
        "room_mb": rlimit - peaks.get("VmPeak", 0),
        "peak_resident_mb": peaks.get("VmHWM"),
        "points": result.points,
        "seconds": round(seconds, 1),
    }


def main() -> int:
    """Measure warm and cold in turn (each in a fresh child process); print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--memory-mb", type=int, default=4096, help="worker.memory_mb (default 4096)")
    parser.add_argument("--child", choices=("warm", "cold"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.notebook.resolve(), args.child == "warm", args.memory_mb)), flush=True)
        return 0
    if os.geteuid() != 0:
        print("error: run as root (the root jail's workers are followed by their fresh uids)", file=sys.stderr)
        return 2
    for mode in ("cold", "warm"):
        argv = [sys.executable, __file__, str(args.notebook), "--memory-mb", str(args.memory_mb), "--child", mode]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        print(done.stdout.strip().splitlines()[-1] if done.returncode == 0 else done.stderr[-2000:], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
