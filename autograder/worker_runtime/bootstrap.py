"""Worker entry point: confine the process (jail, user, limits), then import torch and serve requests."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import sys
import threading
from typing import Any

from . import guards, jail, seccomp

# What the grader runs with `python -I -B -u -c BOOT_CODE lib_dir config request_fd reply_fd status_fd`.
BOOT_CODE = "import sys; sys.path.insert(0, sys.argv[1]); from worker_runtime.bootstrap import main; main(sys.argv[1:])"
# The module name the installed project's Otter start-up hook runs under (its .pth skips `python -I`
# interpreters; dropped here as well). Equal to autograder.integrations.otter_hook.HOOK_NAME, which
# this package, copied into the sandbox, cannot import.
OTTER_STARTUP_HOOK = "autograder_otter_hook"
# The attribute every version of that hook's finder carries (otter_hook.OtterRunnerHook), so that a
# hook left in site-packages under an earlier module name is dropped too.
OTTER_HOOK_MARKER = "is_otter_runner_hook"
# One umask for cold and warm workers (a fork would keep the zygote's, a cold start the grader's
# at that moment): the usual one.
WORKER_UMASK = 0o022
EXIT_DROP_FAILED = 76  # plain isolation as root, but switching to the sandbox user was refused


def main(argv: list[str]) -> None:
    """Args: [lib_dir, config_path, request_fd, reply_fd, status_fd]; never returns."""
    lib_dir, config_path = argv[0], argv[1]
    request_fd, reply_fd, status_fd = (int(value) for value in argv[2:5])
    sys.argv[1:] = argv  # a warm fork's are the zygote's: the student sees a cold worker's
    os.umask(WORKER_UMASK)  # not the grader's (a cold worker's) or the zygote's (a warm one's)
    with open(config_path, encoding="utf-8") as handle:
        config: dict[str, Any] = json.load(handle)
    # namespace: the root jail is built here; userns: bubblewrap built it before Python started
    in_namespace = config["isolation"] in ("namespace", "userns")
    stage = "jail"
    try:
        if config["isolation"] == "namespace":
            jail.build_jail(config)
        stage = "user"
        if config["uid"] is not None:
            jail.drop_privileges(config["uid"])
        stage = "limits"
        # in a user namespace RLIMIT_NPROC counts only the namespace's own processes (Linux >= 5.14)
        jail.apply_rlimits(
            config["limits"], limit_processes=config["uid"] is not None or config["isolation"] == "userns"
        )
        stage = "seccomp"
        # before the fork: the reaper (the namespace's pid 1) and everything the student starts
        # can neither ptrace nor read or write another process's memory
        # without namespaces ("uid") it also keeps the worker off the grader's network
        try:
            seccomp.install(network=config["isolation"] != "uid")
        except seccomp.SeccompError:
            if in_namespace or config["isolation"] == "uid":
                raise  # weak isolation: best effort, like the rest of that mode
    except Exception as exc:
        sys.stderr.write(f"worker setup failed ({stage}): {exc}\n")
        if config["isolation"] == "namespace":
            os._exit(jail.EXIT_JAIL_FAILED)
        os._exit(EXIT_DROP_FAILED if stage == "user" else 1)
    _clean_sys_path(config, lib_dir, in_namespace)
    if in_namespace:  # the host path of this package is gone after chroot; later imports need the new one
        sys.modules[__package__].__path__[:] = [os.path.join(jail.JAIL_LIB, __package__)]
        worker_pid = os.fork()  # before torch is imported: no threads yet, so fork is safe
        if worker_pid:
            _detach_stdio_and(request_fd, reply_fd)
            jail.reap_as_init(worker_pid, status_fd)
    if status_fd >= 0:
        os.close(status_fd)
    _start_orphan_watchdog(request_fd)
    _serve(config, request_fd, reply_fd, in_namespace)


def _clean_sys_path(config: dict[str, Any], lib_dir: str, in_namespace: bool) -> None:
    """Keep stdlib and site-packages, put the sandbox lib first, drop anything in the project."""
    hidden, keep = config["jail"]["hidden"], config["jail"]["python_dirs"]
    cleaned = [jail.JAIL_LIB if in_namespace else lib_dir]
    for entry in sys.path:
        if not entry or entry == lib_dir or entry in cleaned:
            continue
        if guards.is_under(entry, hidden) and not guards.visible_by_deepest_root(entry, keep, hidden):
            continue  # e.g. an editable install's .pth pointing at the project
        cleaned.append(entry)
    sys.path[:] = cleaned
    # setuptools' editable installs map package names to project paths with a meta-path finder
    # (installed as the class itself, not an instance) and a path hook for namespace packages; the
    # project's Otter start-up hook is a meta-path finder too (it would import the project)
    sys.meta_path[:] = [f for f in sys.meta_path if not _from_editable_install(f) and not _is_otter_hook(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not _from_editable_install(h)]
    sys.path_importer_cache.clear()


def _is_otter_hook(finder: object) -> bool:
    """Returns: whether a meta-path finder is the installed Otter start-up hook (any version of it)."""
    return type(finder).__module__ == OTTER_STARTUP_HOOK or getattr(finder, OTTER_HOOK_MARKER, False) is True


def _from_editable_install(finder: object) -> bool:
    """Returns: whether a finder or path hook comes from an editable install's generated module."""
    modules = (
        getattr(finder, "__module__", None),
        type(finder).__module__,
        getattr(getattr(finder, "__self__", None), "__module__", None),
    )
    return any("__editable__" in (module or "") for module in modules)


def _detach_stdio_and(*fds: int) -> None:
    """In the reaper: drop the protocol pipes and stdio so only the worker holds them."""
    for fd in fds:
        os.close(fd)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)


def _start_orphan_watchdog(request_fd: int) -> None:
    """Exit as soon as the grader's end of the request pipe closes, even while student code is busy."""

    def watch() -> None:
        poller = select.poll()
        poller.register(request_fd, 0)  # hang-up and error are always reported
        while True:
            for _, event in poller.poll():
                if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    os._exit(0)

    threading.Thread(target=watch, name="orphan-watchdog", daemon=True).start()


def _serve(config: dict[str, Any], request_fd: int, reply_fd: int, in_namespace: bool) -> None:
    import torch  # imported here: after the jail and the limits, so it loads under them

    torch.set_num_threads(config["limits"]["threads"])
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    # The public torch.use_deterministic_algorithms imports torch._inductor (about 1 s of CPU per
    # worker start) only to mirror the flag into torch.compile's config; set the flag directly.
    set_deterministic = getattr(torch._C, "_set_deterministic_algorithms", None)
    if set_deterministic is not None:
        set_deterministic(True, warn_only=True)
    else:
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    from .server import Server

    policy = None if in_namespace else guards.FilePolicy(**config["policy"])
    guards.install(policy, block_network=not in_namespace)
    for name in config.get("preload", []):  # installed modules the submission imports (under the guards)
        with contextlib.suppress(BaseException):  # the statement importing it will report the problem
            importlib.import_module(name)
    Server(request_fd, reply_fd, config["device"]).serve()
    sys.stdout.flush()
    os._exit(0)  # skip student atexit handlers
