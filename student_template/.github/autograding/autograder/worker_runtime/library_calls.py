"""Library calls a graded part may not use: recording stand-ins put in place before any student code runs."""

# Standard library only: the public checks (student_template/.github/autograding/) use it too.
from __future__ import annotations

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
    """The worker's recorder: writes the name's prepared event frame to the reply pipe at once
    (under PIPE_BUF: one atomic write), so that no later student code can take the record back.

    Args:
        fd: the reply pipe.
        frames: name -> its packed event frame (read-only).

    Returns:
        The recorder `install` takes.
    """

    def record(name: str, _fd: int = fd, _frames: Mapping[str, bytes] = frames, _write: Any = os.write) -> None:
        _write(_fd, _frames[name])

    return record


# The stand-ins' and the recorder's code: the audit hook refuses reading or replacing their defaults.
PROTECTED_CODES = (_recording(None, "", print).__code__, frame_recorder(-1, {}).__code__)


def _resolve(name: str) -> tuple[Any, str] | None:
    """The object that holds a dotted name's last component: its longest importable module prefix,
    then attributes (torch.ops.aten.x: the torch module, then ops and aten)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
            for attr in parts[cut:-1]:
                owner = getattr(owner, attr)
        except (ImportError, AttributeError):
            continue
        return owner, parts[-1]
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
        found = _resolve(name)
        original = getattr(*found, None) if found else None
        if found is None or original is None:
            continue
        if isinstance(original, type):
            places = [(original, method) for method in ("__init__", "forward") if method in vars(original)]
        else:
            holders = [module for module in list(sys.modules.values()) if vars_of(module).get(found[1]) is original]
            places = [(owner, found[1]) for owner in {id(o): o for o in (found[0], *holders)}.values()]
        for owner, attr in places:
            value = vars(owner)[attr] if isinstance(owner, type) else getattr(owner, attr)
            if getattr(value, "__code__", None) is not PROTECTED_CODES[0]:  # an alias already covered
                undo.append((owner, attr, value))
                setattr(owner, attr, _recording(value, name, record))

    def restore() -> None:
        for owner, attr, value in reversed(undo):
            setattr(owner, attr, value)

    return restore


def vars_of(obj: Any) -> dict[str, Any]:
    """Args: anything in sys.modules (a few entries are not modules). Returns: its namespace, or {}."""
    namespace = getattr(obj, "__dict__", None)
    return namespace if isinstance(namespace, dict) else {}
