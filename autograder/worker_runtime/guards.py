"""Audit-hook guards in the worker: no new processes, no signals to others, (no namespaces) file/network policy."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from . import library_calls

_PROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "pty.spawn",
        "os.startfile",
    }
)
_NETWORK_EVENTS = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"})
_LISTING_EVENTS = frozenset({"os.listdir", "os.scandir"})
# Events that change the file system, with the positions of their path arguments.
_MUTATING_EVENTS = {
    "os.mkdir": (0,),
    "os.rmdir": (0,),
    "os.remove": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# The library-call stand-ins hold the originals in their defaults (library_calls.py): those may not
# be read or replaced, and the garbage collector's object walks, which reach them, are refused.
_SHIELDED = {
    "object.__getattr__": ("__defaults__", "__kwdefaults__"),
    "object.__setattr__": ("__defaults__", "__kwdefaults__", "__code__"),
}
_GC_WALKS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})


class SandboxViolation(PermissionError):
    """Raised into student code when it does something the grading sandbox forbids."""


def is_under(path: str, roots: Sequence[str]) -> bool:
    """Args: absolute path, directory roots. Returns: whether `path` is one of them or inside one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _deepest(path: str, roots: Sequence[str]) -> int:
    return max((len(root.rstrip("/")) for root in roots if is_under(path, [root])), default=-1)


def visible_by_deepest_root(path: str, visible: Sequence[str], hidden: Sequence[str]) -> bool:
    """Args: path; visible and hidden roots. Returns: whether the deepest root containing `path`
    is a visible one (False when none contains it)."""
    deepest_visible = _deepest(path, visible)
    return deepest_visible >= 0 and deepest_visible > _deepest(path, hidden)


class FilePolicy:
    """Which real paths the worker may read and write (used when no mount namespace hides files)."""

    def __init__(self, read_roots: Sequence[str], write_roots: Sequence[str], hidden_roots: Sequence[str]) -> None:
        """Args:
        read_roots: trees that may be read (system, Python, sandbox, data).
        write_roots: trees that may be written (the private working directory).
        hidden_roots: trees never readable even when inside a read root (the project),
            except where a read root lies inside them (the virtual environment).
        """
        self.read_roots = [os.path.realpath(p) for p in read_roots]
        self.write_roots = [os.path.realpath(p) for p in write_roots]
        self.hidden_roots = [os.path.realpath(p) for p in hidden_roots]

    def readable(self, path: str) -> bool:
        """Args: real absolute path. Returns: whether reading it is allowed (the deepest matching
        root decides: a venv inside the hidden project is readable, a hidden package inside
        site-packages is not)."""
        return visible_by_deepest_root(path, [*self.read_roots, *self.write_roots], self.hidden_roots)

    def writable(self, path: str) -> bool:
        """Args: real absolute path. Returns: whether writing it is allowed."""
        return is_under(path, self.write_roots) or path in ("/dev/null",)


def _is_write(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def install(policy: FilePolicy | None, block_network: bool) -> None:
    """Install the audit hook (irreversible for this process).

    Args:
        policy: file policy to enforce, or None when a mount namespace already hides the files.
        block_network: deny socket connect/bind/send (when no network namespace is in place).
    """
    own_pid = os.getpid()
    protected = library_calls.PROTECTED_CODES  # bound here: rebinding the module's name changes nothing
    realpath, fsdecode = os.path.realpath, os.fsdecode

    def check_path(path: Any, write: bool) -> None:
        if path is None or isinstance(path, int) or policy is None:
            return
        real = realpath(fsdecode(path))
        allowed = policy.writable(real) if write else policy.readable(real)
        if not allowed:
            raise SandboxViolation(f"the grading sandbox does not allow access to {fsdecode(path)!r}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in _PROCESS_EVENTS:
            raise SandboxViolation(f"the grading sandbox does not allow starting processes ({event})")
        if event in ("os.kill", "os.killpg") and (event == "os.killpg" or args[0] != own_pid):
            raise SandboxViolation("the grading sandbox does not allow signalling other processes")
        if block_network and event in _NETWORK_EVENTS:
            raise SandboxViolation("the grading sandbox has no network access")
        if event == "open" and args:
            check_path(args[0], _is_write(args[1] if len(args) > 1 else None, args[2] if len(args) > 2 else None))
        elif event in _MUTATING_EVENTS:
            for index in _MUTATING_EVENTS[event]:
                check_path(args[index] if index < len(args) else None, True)
        elif event in _LISTING_EVENTS and args:
            check_path(args[0] if args[0] is not None else ".", False)
        elif event in _GC_WALKS or (  # reading __code__ is not shielded: no recursion here
            event in _SHIELDED and args[1] in _SHIELDED[event] and getattr(args[0], "__code__", None) in protected
        ):
            raise SandboxViolation(f"the grading sandbox does not allow this introspection ({event})")

    sys.addaudithook(hook)
