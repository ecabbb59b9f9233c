"""Grades each attack notebook's masked-loss part as the current user; measures what the attack achieved."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "tests" / "fixtures" / "security"
MARKERS = Path("/tmp/autograder-security-markers")
GRADEBOOK = "file,masked_loss,total\nvictim.py,10,10\nattacker.py,0,0\n"
PORT = 47321
# Files an attack may try to create outside the sandbox (besides anything new in MARKERS).
OUTSIDE = [
    Path("/tmp/autograder-security-pwned"),
    Path("/var/tmp/autograder-security-pwned"),
    Path("/dev/shm/autograder-security-pwned"),
    Path("/root/autograder-security-pwned"),
    ROOT / "autograder-security-pwned",
    ROOT.parent / "autograder-security-pwned",
]


def _bind_when_free(server: socket.socket, address: str, wait_s: float = 180.0) -> None:
    """Bind PORT on `address`, waiting while another run of this driver on the machine still holds
    it (two gradings of the corpus at once, e.g. a developer's run beside CI's)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            server.bind((address, PORT))
            return
        except OSError as error:
            if error.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise
            time.sleep(1)


class Listener:
    """Loopback TCP listeners (127.0.0.1 and ::1): every connection and byte an attack sends."""

    def __init__(self) -> None:
        self.connections = 0
        self.received = b""
        self.sockets = []
        for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            server = socket.socket(family, socket.SOCK_STREAM)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                _bind_when_free(server, address)
            except OSError as error:  # no ::1 in a container with IPv6 off: nothing can connect there either
                if error.errno != errno.EADDRNOTAVAIL:
                    raise
                server.close()
                continue
            server.listen(16)
            self.sockets.append(server)
            threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            self.connections += 1
            connection.settimeout(2)
            with contextlib.suppress(OSError):
                self.received += connection.recv(65536)
            connection.close()


def _plant(secret: str) -> None:
    MARKERS.mkdir(exist_ok=True)
    for entry in MARKERS.iterdir():
        entry.unlink()
    (MARKERS / "gradebook.csv").write_text(GRADEBOOK)
    (MARKERS / "secret.txt").write_text(secret)
    os.chmod(MARKERS / "secret.txt", 0o600)
    for path in OUTSIDE:
        path.unlink(missing_ok=True)


def _written_outside() -> list[str]:
    written = [str(p) for p in MARKERS.iterdir() if p.name not in ("gradebook.csv", "secret.txt")]
    if (MARKERS / "gradebook.csv").read_text() != GRADEBOOK:
        written.append(str(MARKERS / "gradebook.csv"))
    return written + [str(p) for p in OUTSIDE if p.exists()]


def _survivors(tag: str, uid: int) -> list[int]:
    """Processes left by the sandbox: the grader's own uid when it is not root (the jail maps the
    student onto it), else any process whose command line holds this run's temp dir."""
    # the warm start's zygote lives as long as this grading process (it is not the sandbox's)
    from autograder.sandbox.warm import zygote_pids

    ours = {os.getpid(), *(_ancestors()), *zygote_pids()}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in ours:
            continue
        try:
            command = Path(f"/proc/{name}/cmdline").read_bytes().decode("utf-8", "replace")
            owner = os.stat(f"/proc/{name}").st_uid
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state in ("Z", "X"):
            continue  # dead, waiting to be reaped by the host's init: runs nothing
        if tag in command or (uid != 0 and owner == uid and "attack_driver" not in command):
            found.append(int(name))
    return found


def _ancestors() -> list[int]:
    pids, pid = [], os.getppid()
    while pid > 1:
        pids.append(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat[stat.rfind(")") + 2 :].split()[1])
    return pids


def main(argv: list[str]) -> None:
    """Args: [output JSON path, "warm" or "cold" (worker.warm_start), attack names...]."""
    from autograder.assignment import assignment_of
    from autograder.config import load_config
    from autograder.sandbox import Limits, choose_isolation
    from autograder.sandbox.uidjail import CHANGED, close_to_workers

    out, start, names = Path(argv[0]), argv[1], argv[2:]
    token, tag = os.environ["AUTOGRADER_FAKE_TOKEN"], os.environ["TMPDIR"]
    secret = f"secret-file-{token[::-1]}"
    overrides: dict[str, object] = {
        "worker.memory_mb": 1536,
        "worker.timeout_s": 40,
        "worker.warm_start": start == "warm",
    }
    if os.environ.get("AUTOGRADER_ATTACK_ISOLATION"):  # tests/containers: the fallback measured in a container
        overrides["worker.isolation"] = os.environ["AUTOGRADER_ATTACK_ISOLATION"]
    config = load_config(None, overrides)
    assignment = assignment_of(config)
    listener = Listener()
    matrix: dict[str, dict] = {}
    # The uploads, as a front end finds them: each attack beside a victim's upload holding a secret.
    uploads = out.parent / "uploads"
    uploads.mkdir(mode=0o755)
    for name in names:
        shutil.copy(FIXTURES / f"{name}.py", uploads / f"{name}.py")
    (uploads / "victim.py").write_text((FIXTURES / "control_honest.py").read_text() + f"\n# {secret}\n")
    if os.geteuid() == 0 and choose_isolation(Limits(isolation=config.worker.isolation)) == "uid":
        close_to_workers([uploads])  # what the CLI does (cli.py) before a batch
    try:
        _grade_all(names, uploads, config, assignment, listener, matrix, (token, tag, secret))
    finally:  # a grader leaves its files closed (uidjail.py); this checkout is given back as it was
        for path, mode in CHANGED.items():
            os.chmod(path, mode)
    out.write_text(json.dumps({"uid": os.getuid(), "matrix": matrix}, indent=1))


def _grade_all(names, uploads, config, assignment, listener, matrix, secrets) -> None:
    from autograder.engine import grade_submission
    from autograder.sandbox.warm import zygote_pids

    token, tag, secret = secrets
    for name in names:
        _plant(secret)
        before = (listener.connections, len(listener.received))
        began = time.monotonic()
        result = grade_submission(uploads / f"{name}.py", config, parts=["masked_loss"], assignment=assignment)
        time.sleep(2)  # a surviving daemon would write again meanwhile
        survivors = _survivors(tag, os.getuid())
        text = json.dumps(result.to_json())
        leaked = (
            text
            + listener.received[before[1] :].decode("utf-8", "replace")
            + "".join(p.read_text(errors="replace") for p in MARKERS.iterdir() if p.name != "secret.txt")
        )
        part = next(p for p in result.parts if p.part == "masked_loss")
        matrix[name] = {
            "points_gained": part.points,
            "files_written_outside": _written_outside(),
            "processes_surviving": len(survivors),
            "secrets_read": int(token in leaked) + int(secret in leaked),
            "loopback_connections": listener.connections - before[0],
            "isolation": result.isolation,
            # a zygote of this process forked the worker (none is made for a cold start, and one
            # that failed a fork is closed: its workers start cold)
            "warm": bool(zygote_pids()),
            "messages": part.messages,
            "seconds": round(time.monotonic() - began, 1),
        }
        print(name, json.dumps(matrix[name])[:300], flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
