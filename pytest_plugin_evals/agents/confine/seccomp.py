"""The seccomp filter of a confined run: system calls no agent needs, refused in the kernel.

The list is Flatpak's (``setup_seccomp`` in its ``flatpak-run.c``, with its non-devel part):
the kernel log, accounting, quotas, the kernel keyring, NUMA memory policy, ``modify_ldt``,
``uselib``, new namespaces and mounts (``unshare``, ``setns``, ``mount``, ``umount2``,
``pivot_root``, ``chroot``, ``clone`` with ``CLONE_NEWUSER``; ``clone3`` and the new mount API
answer ENOSYS so programs fall back), ``ioctl`` ``TIOCSTI``/``TIOCLINUX``, ``perf_event_open``,
``ptrace``, a ``personality`` other than Linux's, and sockets but Unix, IPv4, IPv6 and netlink
ones. Flatpak leaves a few calls to the capabilities it drops; the run's processes hold every
capability of their own user namespace, so these are refused too, as Docker's default profile
refuses them: ``bpf``, ``userfaultfd``, ``kexec_*``, ``init_module``/``finit_module``/
``delete_module``, and ``io_uring_*`` (ENOSYS: runtimes fall back to plain reads and writes).

A run whose agent nests a sandbox of its own (:attr:`Confinement.nests`: Claude Code's shell,
Codex) keeps what that sandbox is made of: ``unshare``, ``setns``, ``clone`` with
``CLONE_NEWUSER``, ``mount``, ``umount2``, ``pivot_root`` and ``chroot``.

The program is classic BPF, built here, for x86_64 (the x32 ABI refused) and aarch64; a process
of any other ABI (32-bit code on a 64-bit kernel) is killed. On other machines there is no
filter. bubblewrap loads it (``--seccomp FD``) right before it starts the run's first process.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
import threading
from pathlib import Path

#: Each call's number on x86_64 and on aarch64 (None: that ABI has no such call).
NUMBERS: dict[str, tuple[int, int | None]] = {
    "syslog": (103, 116), "uselib": (134, None), "acct": (163, 89), "modify_ldt": (154, None),
    "quotactl": (179, 60), "add_key": (248, 217), "request_key": (249, 218),
    "keyctl": (250, 219), "move_pages": (279, 239), "mbind": (237, 235),
    "get_mempolicy": (239, 236), "set_mempolicy": (238, 237), "migrate_pages": (256, 238),
    "perf_event_open": (298, 241), "ptrace": (101, 117), "bpf": (321, 280),
    "userfaultfd": (323, 282), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "chroot": (161, 51),
    "clone3": (435, 435), "open_tree": (428, 428), "move_mount": (429, 429),
    "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "mount_setattr": (442, 442), "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "clone": (56, 220), "ioctl": (16, 29), "personality": (135, 92), "socket": (41, 198),
}  # fmt: skip
#: Refused with EPERM.
REFUSED = (
    "syslog", "uselib", "acct", "modify_ldt", "quotactl", "add_key", "request_key", "keyctl",
    "move_pages", "mbind", "get_mempolicy", "set_mempolicy", "migrate_pages",
    "perf_event_open", "ptrace", "bpf", "userfaultfd", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module",
)  # fmt: skip
#: Refused with EPERM, but for a run that nests a sandbox of its own.
NAMESPACES = ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot")
#: Answered ENOSYS: the caller falls back to an older call (``clone``, ``mount``, ``read``).
ABSENT = (
    "clone3", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "io_uring_setup", "io_uring_enter", "io_uring_register",
)  # fmt: skip
#: The socket families a run may open: AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6, AF_NETLINK.
SOCKET_FAMILIES = (0, 1, 2, 10, 16)
#: The ``ioctl`` requests refused: faking terminal input, and the Linux console's.
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
CLONE_NEWUSER = 0x10000000
#: The only personality a run may set: PER_LINUX.
PER_LINUX = 0

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
#: Offsets in ``struct seccomp_data``: nr, arch, then six 64-bit arguments (their low halves
#: first: both ABIs are little-endian).
NR, ARCH, ARGS = 0, 4, 16

_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06

#: The fd bubblewrap reads the program from.
FD = 9


class _Program:
    """Classic BPF with jumps to labels, resolved when assembled."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | None, str | None, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_ABS, None, None, offset))

    def jump(self, op: int, k: int, true: str | None, false: str | None = None) -> None:
        self.code.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET, None, None, value))

    def assemble(self) -> bytes:
        out = []
        for i, (op, true, false, k) in enumerate(self.code):
            jt, jf = (0 if t is None else self.labels[t] - i - 1 for t in (true, false))
            if not (0 <= jt <= 255 and 0 <= jf <= 255):
                raise ValueError(f"a jump at {i} does not fit in BPF")
            out.append(struct.pack("=HBBI", op, jt, jf, k))
        return b"".join(out)


def program(nests: bool) -> bytes:
    """The filter's BPF program (``struct sock_filter`` records, native byte order)."""
    p = _Program()
    p.load(ARCH)
    p.jump(_JEQ, AUDIT_ARCH_X86_64, "x86_64")
    p.jump(_JEQ, AUDIT_ARCH_AARCH64, "aarch64")
    p.ret(RET_KILL_PROCESS)
    for column, abi in enumerate(("x86_64", "aarch64")):
        p.label(abi)
        p.load(NR)
        if abi == "x86_64":
            p.jump(_JGE, X32_SYSCALL_BIT, "eperm")
        refused = (*REFUSED, *(() if nests else NAMESPACES))
        for label, names in (("eperm", refused), ("enosys", ABSENT)):
            for name in names:
                number = NUMBERS[name][column]
                if number is not None:
                    p.jump(_JEQ, number, label)
        for name in ("ioctl", "personality", "socket", *(() if nests else ("clone",))):
            p.jump(_JEQ, NUMBERS[name][column] or 0, name)
        p.ret(RET_ALLOW)
    p.label("ioctl")
    p.load(ARGS + 8)
    p.jump(_JEQ, TIOCSTI, "eperm")
    p.jump(_JEQ, TIOCLINUX, "eperm", "allow")
    p.label("personality")
    p.load(ARGS)
    p.jump(_JEQ, PER_LINUX, "allow", "eperm")
    p.label("socket")
    p.load(ARGS)
    for family in SOCKET_FAMILIES:
        p.jump(_JEQ, family, "allow")
    p.ret(RET_ERRNO | errno.EAFNOSUPPORT)
    p.label("clone")
    p.load(ARGS)
    p.jump(_JSET, CLONE_NEWUSER, "eperm", "allow")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("eperm")
    p.ret(RET_ERRNO | errno.EPERM)
    p.label("enosys")
    p.ret(RET_ERRNO | errno.ENOSYS)
    return p.assemble()


def supported(machine: str | None = None) -> bool:
    """Whether this machine's processes get the filter (x86_64 and aarch64 do)."""
    return (machine or platform.machine()).lower() in ("x86_64", "amd64", "aarch64", "arm64")


_lock = threading.Lock()


def filter_file(folder: Path, nests: bool) -> Path:
    """The program, written once per process in ``folder`` (a private one)."""
    path = folder / f"seccomp-{'nests' if nests else 'run'}.bpf"
    with _lock:
        if not path.is_file():
            spare = path.with_name(f".{path.name}.{os.getpid()}")
            spare.write_bytes(program(nests))
            spare.replace(path)
    return path


def with_filter(bwrap_argv: list[str], folder: Path, nests: bool) -> list[str]:
    """``bwrap_argv`` (bubblewrap first) loading the filter: a shell opens its file on
    :data:`FD` and becomes bubblewrap. Unchanged on a machine with no filter."""
    if not supported():
        return bwrap_argv
    path = filter_file(folder, nests)
    wrapper = f'exec "$@" {FD}<"$0"'
    return [
        "/bin/sh",
        "-c",
        wrapper,
        str(path),
        bwrap_argv[0],
        "--seccomp",
        str(FD),
        *bwrap_argv[1:],
    ]
