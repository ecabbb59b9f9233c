"""mtkit.allocator: after keep_heap_mapped, a large tensor freed and allocated again costs no new
page faults; with MTKIT_MALLOC_DEFAULT=1 glibc's defaults stay (each allocation faults its pages in)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "fixtures" / "mtkit" / "allocation_faults.py"
PAGES_PER_LARGE_BLOCK = 64 * 1024 * 1024 // 4096


def _run(where: str, **env: str) -> tuple[bool, int]:
    """(settings applied, minor page faults of 30 rounds of allocations) in a fresh process."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **env}
    environment.pop("GLIBC_TUNABLES", None)  # glibc's own defaults unless the call changes them
    if not env:
        environment.pop("MTKIT_MALLOC_DEFAULT", None)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), where], env=environment, check=True, capture_output=True, text=True, timeout=300
    ).stdout.split()
    return out[0] == "1", int(out[1])


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
@pytest.mark.parametrize("where", ["main", "thread"])
def test_freed_blocks_stay_mapped_only_when_tuned(where: str) -> None:
    tuned, tuned_faults = _run(where)
    default, default_faults = _run(where, MTKIT_MALLOC_DEFAULT="1")
    assert tuned and not default
    # Defaults: every 64 MiB block (above glibc's largest mmap threshold) is mapped afresh and
    # faulted in, 30 times.
    assert default_faults >= 30 * PAGES_PER_LARGE_BLOCK * 0.9
    # Tuned: freed blocks stay in the heap; after a few allocations (aligned requests do not fit
    # the first freed block exactly, so the heap grows until freed neighbours merge) they are reused.
    assert tuned_faults <= default_faults / 3
