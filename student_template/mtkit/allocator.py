"""Keep glibc malloc from returning training's large tensors to the kernel after every step.

A training step allocates and frees the same large buffers (logits, their gradients, attention
scores) each step. glibc serves blocks above its mmap threshold with fresh mmap() calls and unmaps
them on free, so every step page-faults its working set in again: that kernel time was about a
third of a CPU training run's CPU time. Serving them from the main heap and never trimming it keeps
the pages mapped (peak memory grows a little; it is simply not given back between steps). One arena
for all threads: a thread's own arena is unmapped whenever it empties, whatever the thresholds,
and the training worker trains in a thread.
"""

from __future__ import annotations

import ctypes
import os

# mallopt() parameter numbers from glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
M_ARENA_MAX = -8
# Trim the heap's top only when 2 GiB lie free there (mallopt takes a C int: 2**31 - 1 at most).
TRIM_THRESHOLD_BYTES = 2**31 - 1
# The same settings for a process not yet started (glibc reads them at start-up, before any thread).
GLIBC_TUNABLES_VALUE = (
    f"glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold={TRIM_THRESHOLD_BYTES}:glibc.malloc.arena_max=1"
)
DISABLE_ENV = "MTKIT_MALLOC_DEFAULT"  # set to 1 to keep glibc's defaults (benchmarks compare both)


def keep_heap_mapped() -> bool:
    """Tell glibc malloc to serve large blocks from the main heap and never shrink it.

    Threads started after the call share the main arena; call it before starting them. Safe to
    call more than once, and a no-op where the C library is not glibc (the call fails and
    the defaults stay) or where `MTKIT_MALLOC_DEFAULT=1` asks for the defaults.

    Returns:
        True when all three settings were applied.
    """
    if os.environ.get(DISABLE_ENV) == "1":
        return False
    try:
        # The process's own symbols include the C library's; no library search (no subprocess).
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc (musl, macOS, Windows): nothing to tune
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settings = ((M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES), (M_ARENA_MAX, 1))
    return all([bool(mallopt(parameter, value)) for parameter, value in settings])  # a list: all are applied
