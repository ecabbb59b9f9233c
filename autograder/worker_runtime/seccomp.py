"""A seccomp filter refusing the calls that reach into another process (ptrace, process_vm_*) or a kernel keyring."""

from __future__ import annotations

import ctypes
import errno
import platform
import socket
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
# Offsets in struct seccomp_data: int nr; __u32 arch; ...
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16  # arg0's low half (both architectures are little-endian)
X32_SYSCALL_BIT = 0x40000000  # x32 calls arrive with the x86-64 arch and this bit set in nr
KEYCTL_JOIN_SESSION_KEYRING = 1  # linux/keyctl.h

# The refused calls, with their numbers on (x86_64, aarch64). Refused: ptrace (attach to, read
# or write another process, e.g. the sandbox's pid 1), process_vm_readv/writev (its memory), kcmp
# (compare its resources), pidfd_getfd (steal its descriptors), process_madvise (act on its
# memory), and the kernel keyring calls add_key, request_key and keyctl: a keyring reached by
# possession ignores the uid, so a session keyring inherited from the grader's login would be read
# and written by every worker (the worker joins a fresh one before this filter).
REFUSED_CALLS = {
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "kcmp": (312, 272),
    "pidfd_getfd": (438, 438),
    "process_madvise": (440, 440),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "keyctl": (250, 219),
}
# Per architecture: its AUDIT_ARCH value and the numbers of the refused calls.
ARCHITECTURES: dict[str, tuple[int, dict[str, int]]] = {
    machine: (arch, {name: numbers[column] for name, numbers in REFUSED_CALLS.items()})
    for column, (machine, arch) in enumerate([("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)])
}

# Refused besides, in the jail without namespaces: io_uring (it opens sockets beside socket(2)),
# the same numbers on both architectures; and socket(2) itself, but for AF_UNIX.
NO_NETWORK_CALLS = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register
SOCKET_CALL = {"x86_64": 41, "aarch64": 198}


class SeccompError(Exception):
    """The filter could not be installed (unknown architecture, or the kernel refused it)."""


def _instruction(code: int, jump_true: int, jump_false: int, k: int) -> bytes:
    # struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; } in native byte order
    return struct.pack("=HBBI", code, jump_true, jump_false, k)


def build_program(machine: str | None = None, network: bool = True) -> bytes:
    """The filter as a classic BPF program.

    Calls of another architecture (e.g. 32-bit `int 0x80` calls on x86-64, whose numbers differ)
    and x32 calls are refused as a whole; the listed calls fail with EPERM; the rest are allowed.

    Args:
        machine: platform.machine() value; default: this host's.
        network: False: also refuse io_uring and every socket but AF_UNIX (the jail without
            namespaces, which shares the grader's network).
    Returns:
        the program's bytes (8 per instruction).
    Raises:
        SeccompError: an architecture this module has no numbers for.
    """
    machine = machine or platform.machine()
    if machine not in ARCHITECTURES:
        raise SeccompError(f"no seccomp syscall table for the {machine} architecture")
    arch, calls = ARCHITECTURES[machine]
    numbers = sorted({*calls.values(), *(() if network else NO_NETWORK_CALLS)})
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    # Layout: [0] load arch, [1] arch check, [2] load nr, [3] x32 check, [4..] one test per
    # call, without network the socket test (3), then allow, then deny. Jumps count the
    # instructions skipped.
    body = [_instruction(BPF_LD_W_ABS, 0, 0, OFFSET_ARCH)]
    tests = len(numbers) + (0 if network else 3)

    def to_deny_from(index: int) -> int:  # instruction `index` jumps to the deny at tests + 5
        return tests + 4 - index

    body.append(_instruction(BPF_JEQ_K, 0, to_deny_from(1), arch))
    body.append(_instruction(BPF_LD_W_ABS, 0, 0, OFFSET_NR))
    body.append(_instruction(BPF_JGE_K, to_deny_from(3), 0, X32_SYSCALL_BIT if machine == "x86_64" else 0xFFFFFFFF))
    for offset, number in enumerate(numbers):
        body.append(_instruction(BPF_JEQ_K, to_deny_from(4 + offset), 0, number))
    if not network:  # socket(domain, ...): anything but AF_UNIX is refused
        body.append(_instruction(BPF_JEQ_K, 0, 2, SOCKET_CALL[machine]))
        body.append(_instruction(BPF_LD_W_ABS, 0, 0, OFFSET_ARG0))
        body.append(_instruction(BPF_JEQ_K, 0, 1, socket.AF_UNIX))
    body.append(_instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    body.append(_instruction(BPF_RET_K, 0, 0, deny))
    return b"".join(body)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(network: bool = True) -> None:
    """Join a fresh session keyring, then install the filter on this process; every thread created
    and process forked later inherits it, and no process can remove it. Sets no_new_privs first (the
    kernel's condition for an unprivileged filter).

    Args:
        network: as for build_program.
    Raises:
        SeccompError: the architecture is unknown or the kernel refused.
    """
    program = build_program(network=network)
    libc = ctypes.CDLL(None, use_errno=True)
    # A new, empty, anonymous session keyring (NULL name: no other process can join it by name), so
    # that not even /proc/keys lists the keyring inherited from the grader; kernels without keyrings
    # (ENOSYS) have nothing to share, and where a filter already refuses keyring calls (EPERM: Docker's
    # and podman's default profiles) no process can reach a keyring through them.
    keyctl = ARCHITECTURES[platform.machine()][1]["keyctl"]
    joined = libc.syscall(keyctl, KEYCTL_JOIN_SESSION_KEYRING, None) >= 0
    if not joined and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
        raise SeccompError(f"fresh session keyring: {errno.errorcode.get(ctypes.get_errno(), '?')}")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompError(f"no_new_privs: {errno.errorcode.get(ctypes.get_errno(), '?')}")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise SeccompError(f"seccomp filter refused: {errno.errorcode.get(ctypes.get_errno(), '?')}")
