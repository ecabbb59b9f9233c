"""The worker's seccomp filter: ptrace, process_vm_* and the keyring calls fail with EPERM, everything else works."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

import pytest

from autograder.worker_runtime import seccomp

pytestmark = pytest.mark.skipif(platform.machine() not in seccomp.ARCHITECTURES, reason="no table for this machine")
KEY_SPEC_SESSION_KEYRING = -3


def _in_filtered_child(probe: str) -> int:
    """Run `probe` in a forked child under the filter. Returns: the errno it saw (0: success)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: install, try, report, exit without running pytest's handlers
        code = 255
        try:
            os.close(read_end)
            seccomp.install()
            libc = ctypes.CDLL(None, use_errno=True)
            number = seccomp.ARCHITECTURES[platform.machine()][1]
            parent = os.getppid()
            if probe == "ptrace":
                result = libc.ptrace(16, parent, None, None)  # PTRACE_ATTACH
            elif probe == "process_vm_readv":
                result = libc.syscall(number["process_vm_readv"], parent, None, 0, None, 0, 0)
            elif probe == "keyctl":  # KEYCTL_GET_KEYRING_ID of the session keyring
                result = libc.syscall(number["keyctl"], 0, KEY_SPEC_SESSION_KEYRING, 0)
            elif probe == "add_key":
                result = libc.syscall(number["add_key"], b"user", b"probe", b"x", 1, KEY_SPEC_SESSION_KEYRING)
            elif probe == "request_key":
                result = libc.syscall(number["request_key"], b"user", b"probe", None, KEY_SPEC_SESSION_KEYRING)
            else:
                result = libc.getpid()
            code = ctypes.get_errno() if result == -1 else 0
        finally:
            os.write(write_end, struct.pack("=i", code))
            os._exit(0)
    os.close(write_end)
    data = os.read(read_end, 4)
    os.close(read_end)
    os.waitpid(pid, 0)
    return int(struct.unpack("=i", data)[0])


@pytest.mark.parametrize("probe", ["ptrace", "process_vm_readv"])
def test_calls_into_another_process_are_refused(probe: str) -> None:
    assert _in_filtered_child(probe) == errno.EPERM


@pytest.mark.parametrize("probe", ["keyctl", "add_key", "request_key"])
def test_keyring_calls_are_refused(probe: str) -> None:
    assert _in_filtered_child(probe) == errno.EPERM


def test_other_calls_work() -> None:
    assert _in_filtered_child("getpid") == 0


def test_the_program_checks_the_architecture_first() -> None:
    program = seccomp.build_program("x86_64")
    code, _, _, k = struct.unpack_from("=HBBI", program, 0)
    assert (code, k) == (seccomp.BPF_LD_W_ABS, seccomp.OFFSET_ARCH)
    _, _, deny_jump, arch = struct.unpack_from("=HBBI", program, 8)
    assert arch == seccomp.ARCHITECTURES["x86_64"][0]
    assert 1 + 1 + deny_jump == len(program) // 8 - 1  # a foreign architecture lands on the deny
    with pytest.raises(seccomp.SeccompError):
        seccomp.build_program("sparc")
