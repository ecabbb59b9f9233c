"""Library calls a graded part may not use: recording stand-ins put in place before any student code runs."""

# Standard library only: the public checks (student_template/.github/autograding/) use it too.
from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

EVENT = "library_call"  # the event the worker sends, ahead of the reply, for each recorded call
Recorder = Callable[[str], object]


def _recording(original: Any, name: str, record: Recorder) -> Callable[..., Any]:
    """A stand-in that records `name`, then calls `original`; what it holds is in keyword defaults
    (no closure cell to read), which the worker's audit hook keeps student code from reading."""

    def call(*args: Any, _original: Any = original, _name: str = name, _record: Recorder = record, **kw: Any) -> Any:
        _record(_name)
        return _original(*args, **kw)

    return call


def frame_recorder(fd: int, frames: Mapping[str, bytes]) -> Recorder:
    """Args: the reply pipe; name -> its packed event frame (read-only). Returns: a recorder that
    writes the frame at once (under PIPE_BUF: one atomic write), so no later student code can take
    the record back."""

    def record(name: str, _fd: int = fd, _frames: Mapping[str, bytes] = frames, _write: Any = os.write) -> None:
        _write(_fd, _frames[name])

    return record


# The stand-ins' and the recorder's code: the audit hook refuses reading or replacing their defaults.
PROTECTED_CODES = (_recording(None, "", print).__code__, frame_recorder(-1, {}).__code__)


def _owner(name: str) -> Any:
    """What holds a dotted name's last component: its shortest module prefix that resolves, then
    attributes (torch.ops.aten.x: torch, then ops and aten); None when nothing resolves. Shortest
    first: a failed import of a longer prefix searches the file system."""
    parts = name.split(".")
    for cut in range(1, len(parts)):
        with contextlib.suppress(ImportError, AttributeError):
            return functools.reduce(getattr, parts[cut:-1], importlib.import_module(".".join(parts[:cut])))
    return None


def install(names: Iterable[str], record: Recorder) -> Callable[[], None]:
    """Put a recording stand-in in place of each named callable: a function wherever a loaded module
    binds it under its name (F.scaled_dot_product_attention is torch._C._nn's), a class's own
    `__init__` and `forward` (its subclasses and every way of building or calling it reach them).

    Args:
        names: dotted names; one that does not resolve is skipped.
        record: called with the declared name on each call.

    Returns:
        A function that puts the originals back.
    """
    undo: list[tuple[Any, str, Any]] = []
    for name in names:
        attr = name.rpartition(".")[2]
        owner = _owner(name)
        original = getattr(owner, attr, None)
        if original is None:
            continue
        if isinstance(original, type):
            places = [(original, method) for method in ("__init__", "forward") if method in vars(original)]
        else:  # a few entries of sys.modules are not modules
            holders = [
                m for m in list(sys.modules.values()) if hasattr(m, "__dict__") and vars(m).get(attr) is original
            ]
            places = [(holder, attr) for holder in {id(h): h for h in (owner, *holders)}.values()]
        for holder, key in places:
            value = vars(holder)[key] if isinstance(holder, type) else getattr(holder, key)
            if getattr(value, "__code__", None) is not PROTECTED_CODES[0]:  # an alias already covered
                undo.append((holder, key, value))
                setattr(holder, key, _recording(value, name, record))

    def restore() -> None:
        for holder, key, value in reversed(undo):
            setattr(holder, key, value)

    return restore
