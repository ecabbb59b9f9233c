"""Worker confinement: chroot of read-only bind mounts, an unprivileged user, resource limits, the pid-1 reaper."""

from __future__ import annotations

import ctypes
import json
import os
import resource
from typing import Any

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
JAIL_LIB = "/sandbox/lib"
JAIL_HOME = "/tmp"
EXIT_JAIL_FAILED = 75  # the grader falls back to plain isolation when it sees this code

_libc = ctypes.CDLL(None, use_errno=True)


class JailError(Exception):
    """Setting up the namespace jail failed (typically: no CAP_SYS_ADMIN in a container)."""


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def encode(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    if _libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        raise JailError(f"mount {source} on {target} failed: {os.strerror(ctypes.get_errno())}")


def _bind(root: str, path: str, extra_flags: int, source: str | None = None) -> None:
    """Bind `source` (default: `path`) read-only at `path` inside `root`."""
    target = root + path
    os.makedirs(target, exist_ok=True)
    _mount(source or path, target, None, MS_BIND)  # not recursive: host submounts stay out
    _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | extra_flags)


def build_jail(config: dict[str, Any]) -> None:
    """Build the jail's root in a private mount namespace and chroot into it (runs as root).

    Args:
        config: worker config; uses "jail_root" (empty host dir to mount the new root on),
            "lib_dir", "jail" (system_links, system_dirs, python_dirs, data_dirs, hidden, tmp_mb).
    """
    spec, root = config["jail"], config["jail_root"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we mount propagates to the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for name, target in spec["system_links"].items():
        os.symlink(target, f"{root}/{name}")
    for path in spec["system_dirs"]:
        _bind(root, path, MS_NOSUID | MS_NODEV)
    _bind(root, "/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _bind(root, "/dev", MS_NOSUID | MS_NOEXEC)  # device nodes stay usable (GPU); perms protect disks
    for path, size in (("/tmp", spec["tmp_mb"]), ("/dev/shm", 16)):
        os.makedirs(root + path, exist_ok=True)
        _mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}m,mode=1777")
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # After /tmp's tmpfs, so that Python or data dirs under /tmp stay visible.
    for path, hide in layers(spec):
        if hide:  # an empty stand-in, made read-only at the end
            os.makedirs(root + path, exist_ok=True)
            _mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
        else:
            _bind(root, path, MS_NOSUID | MS_NODEV)
    _bind(root, JAIL_LIB, MS_NOSUID | MS_NODEV, source=config["lib_dir"])
    for path in spec["hidden"]:
        _mount(None, root + path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chroot(root)
    os.chdir(JAIL_HOME)


def layers(spec: dict[str, Any]) -> list[tuple[str, bool]]:
    """The jail's visible (python and data dirs) and hidden paths, as (path, hidden), shallow paths
    first, so the deepest decides: the venv shows through the hidden project, a hidden package
    inside site-packages stays hidden.

    Args:
        spec: the config's "jail" section.
    """
    found = [(path, False) for path in spec["python_dirs"] + spec["data_dirs"]]
    found += [(path, True) for path in spec["hidden"]]
    return sorted(found, key=lambda layer: len(layer[0].rstrip("/")))


def drop_privileges(uid: int) -> None:
    """Become `uid` (group too, no supplementary groups) for good; set no_new_privs.

    Args:
        uid: the unprivileged user id, e.g. 65534 (nobody).
    """
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise JailError("could not drop privileges")
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # setuid binaries in /usr stay powerless


def apply_rlimits(limits: dict[str, Any], limit_processes: bool) -> None:
    """Set the worker's resource limits (hard = soft, so student code cannot raise them).

    Args:
        limits: memory_mb, memory_rlimit ("as" or "data"), cpu_s, file_mb, processes, and for a
            warm start preloaded_mb (what the zygote's preload maps, added to the memory limit).
        limit_processes: set RLIMIT_NPROC (only meaningful when running as a separate user).
    """
    memory = resource.RLIMIT_AS if limits["memory_rlimit"] == "as" else resource.RLIMIT_DATA
    memory_bytes = (limits["memory_mb"] + limits.get("preloaded_mb", 0)) << 20
    wanted = [
        (memory, memory_bytes, memory_bytes),
        # soft CPU limit sends SIGXCPU; the hard one a second later SIGKILL
        (resource.RLIMIT_CPU, limits["cpu_s"], limits["cpu_s"] + 1),
        (resource.RLIMIT_FSIZE, limits["file_mb"] << 20, limits["file_mb"] << 20),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if limit_processes:
        wanted.append((resource.RLIMIT_NPROC, limits["processes"], limits["processes"]))
    for which, soft, hard in wanted:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        resource.setrlimit(which, (soft, hard))


def reap_as_init(worker_pid: int, status_fd: int) -> None:
    """Run as pid 1 of the worker's pid namespace until the worker exits; never returns.

    Reaps orphans (student forks); when the worker ends, reports its wait status on
    `status_fd` and exits, which makes the kernel kill everything left in the namespace.

    Args:
        worker_pid: the worker child's pid.
        status_fd: pipe to the grader for the worker's exit status.
    """
    # Not dumpable: a process of the same uid without capabilities (the student's, in the jail
    # without root) can then neither ptrace this one nor open its /proc/1/mem, so it cannot undo
    # the parent-death signal that ends the namespace with the grader. (In the root jail the uid
    # switch already cleared the flag.)
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        if pid != worker_pid:
            continue
        report = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit_code": os.WEXITSTATUS(status)}
        try:
            os.write(status_fd, json.dumps(report).encode())
        finally:
            os._exit(0)
