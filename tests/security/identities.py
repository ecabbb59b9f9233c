"""Running a command as root or as a throwaway non-root user (created with useradd, removed after)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0
# CI runs its tiers side by side on one checkout. A root grading in the jail without namespaces
# closes the checkout to other users while it runs (as_container_root, exclusive), so a test of
# another tier that reads it as another user (shared) waits for it, and it for them.
CHECKOUT_LOCK = Path(__file__).resolve().parents[2] / ".cache" / "checkout-modes.lock"


def holding_checkout(mode: str, argv: list[str]) -> list[str]:
    """argv run while holding the checkout's lock (`--shared` or `--exclusive`). flock(1) forks the
    command: a test that signals the process it starts must not wrap it.

    Args:
        mode: flock's option; argv: the command.
    Returns:
        the command line.
    """
    CHECKOUT_LOCK.parent.mkdir(exist_ok=True)
    return ["flock", mode, str(CHECKOUT_LOCK), *argv]


def _blocked_ancestor(path: str) -> tuple[str, str] | None:
    """The first directory on the way to `path` that other users cannot traverse, and its child on
    that way (e.g. ("/root", "/root/.pyenv") for a pyenv Python); None when nothing blocks."""
    real = Path(os.path.realpath(path))
    for parent in reversed(real.parents):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return str(parent), str(parent / real.relative_to(parent).parts[0])
    return None


def as_user(user: str, argv: list[str]) -> list[str]:
    """argv run as `user`. When Python lives under a directory others cannot traverse (pyenv under
    /root, mode 700), the command runs in a private mount namespace where that directory is an
    empty tmpfs holding only the needed child (bind-mounted back): the host's /root is not
    changed and nothing else in it becomes reachable.

    Args:
        user: the account; argv: the command.
    Returns:
        the command line that runs argv as that user.
    """
    drop = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"]
    blocked = _blocked_ancestor(sys.base_prefix)
    if blocked is None:
        return drop + argv
    parent, child = blocked
    below = Path(os.path.realpath(sys.base_prefix))
    if any(not os.stat(p).st_mode & stat.S_IXOTH for p in [below, *below.parents] if p.is_relative_to(child)):
        pytest.skip(f"more than one directory on the way to {sys.base_prefix} is closed to other users")
    script = (
        'set -e; mount --bind "$1" /mnt; mount -t tmpfs -o mode=755,size=1m tmpfs "$2"; '
        'mkdir -p "$1"; mount --move /mnt "$1"; shift 2; exec "$@"'
    )
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        child,
        parent,
        *drop,
        *argv,
    ]


@contextlib.contextmanager
def throwaway_user() -> Iterator[str]:
    """A new system account without home or shell, deleted afterwards (needs root).

    Returns:
        its name.
    """
    if not IS_ROOT:
        pytest.skip("creating a throwaway user needs root")
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("needs useradd and setpriv to create and become a throwaway user")
    user = f"agsec{secrets.token_hex(3)}"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
        check=True,
        capture_output=True,
    )
    try:
        yield user
    finally:
        subprocess.run(["userdel", user], capture_output=True)


def processes_of(uid: int) -> list[int]:
    """Args: a uid. Returns: the pids of the live (not zombie) processes it owns."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid and _state(int(name)) not in ("Z", "X"):
                found.append(int(name))
        except OSError:
            continue
    return found


def processes_named(comm: str) -> list[int]:
    """Args: a process name (what prctl(PR_SET_NAME) sets). Returns: the live processes so named."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if Path(f"/proc/{name}/comm").read_text().strip() == comm and _state(int(name)) not in ("Z", "X"):
                found.append(int(name))
        except OSError:
            continue
    return found


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


# The capabilities Docker's default profile leaves to root in a container (podman's are a subset):
# without CAP_SYS_ADMIN neither `unshare` nor mount works, so the namespace jail cannot start.
DOCKER_DEFAULT_CAPS = (
    "chown,dac_override,fsetid,fowner,mknod,net_raw,setgid,setuid,setfcap,setpcap,"
    "net_bind_service,sys_chroot,kill,audit_write"
)


def as_container_root(argv: list[str], project: Path) -> list[str]:
    """argv run as root with only Docker's default capabilities, as in a default container, in a
    private mount namespace that hides what a container would not hold: every other checkout of
    the project on this machine (empty tmpfs over it) and /root but the Python in it.

    Args:
        argv: the command; project: this checkout (left visible).
    Returns:
        the command line.
    """
    if shutil.which("setpriv") is None or shutil.which("unshare") is None:
        pytest.skip("needs setpriv and unshare to drop to a container's capabilities")
    others = other_checkouts(project)
    script = 'set -e; for d in "$@"; do [ "$d" = -- ] && break; mount -t tmpfs -o size=1m tmpfs "$d"; done; '
    blocked = _blocked_ancestor(sys.base_prefix)
    if blocked is not None:  # /root (0700) as an empty tmpfs holding only the way to Python
        parent, child = blocked
        script += f'mount --bind "{child}" /mnt; mount -t tmpfs -o mode=700 tmpfs "{parent}"; '
        script += f'mkdir -p "{child}"; mount --move /mnt "{child}"; '
    script += 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'
    drop = ["setpriv", f"--bounding-set=-all,+{DOCKER_DEFAULT_CAPS.replace(',', ',+')}", "--inh-caps=-all", "--"]
    return holding_checkout(
        "--exclusive",
        ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", *others, "--", *drop, *argv],
    )


def other_checkouts(project: Path) -> list[str]:
    """Args: this checkout. Returns: the project's other checkouts on this machine (a container
    holds one copy; these are hidden from a grading that plays the container)."""
    others: list[str] = []
    for pattern in ("work/*", "work/*/*", "home/*", "opt/*", "srv/*", "tmp/*"):
        for path in sorted(Path("/").glob(pattern)):
            # a checkout holds the grader itself (its tests/ folder has an assignments/ too); this one's
            # own folders are not another checkout
            copy = (path / "autograder").is_dir() and (path / "assignments" / "transformer_mt").is_dir()
            copy = copy and not path.resolve().is_relative_to(project.resolve())
            if copy and not any(path.is_relative_to(other) for other in others):
                others.append(str(path))
    return others


def in_default_container(argv: list[str], project: Path, work: Path, env: dict[str, str]) -> list[str]:
    """argv run by podman in a default container (root, the default capabilities and seccomp
    profile, no network) whose root is an overlay of this machine's (what it changes there is
    dropped with it); `work` is bound in read-write, the project's other checkouts are hidden.

    Args:
        argv: the command; project: this checkout (the working directory); work: a folder for
            results; env: the command's whole environment.
    Returns:
        the command line (skips the test when podman cannot start a container here).
    """
    podman = shutil.which("podman")
    if podman is None:
        pytest.skip("podman is not installed")
    # the engine's default limits (a million files) can be above this machine's hard limits
    ulimits = ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"]
    base = [podman, "run", "--rm", "--network", "none", *ulimits]
    probe = subprocess.run([*base, "--rootfs", "/:O", "true"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip(f"podman cannot start a container here: {probe.stderr.strip()[-300:]}")
    # notmpcopyup: an empty tmpfs (by default the engine copies what it hides into it)
    mounts = [f"--mount=type=tmpfs,destination={other},notmpcopyup" for other in other_checkouts(project)]
    environment = [f"--env={key}={value}" for key, value in env.items()]
    return [*base, *mounts, *environment, "-v", f"{work}:{work}", "-w", str(project), "--rootfs", "/:O", *argv]
