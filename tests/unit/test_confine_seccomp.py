"""The seccomp program, run by a small classic-BPF interpreter for both ABIs it knows (the
kernel runs it on this machine's ABI in ``tests/e2e/test_seccomp.py``)."""

from __future__ import annotations

import errno
import struct
from pathlib import Path

import pytest

from pytest_plugin_evals.agents.confine import seccomp
from pytest_plugin_evals.agents.confine.seccomp import (
    AUDIT_ARCH_AARCH64,
    AUDIT_ARCH_X86_64,
    NUMBERS,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
)

ARCHES = {"x86_64": (AUDIT_ARCH_X86_64, 0), "aarch64": (AUDIT_ARCH_AARCH64, 1)}
EPERM, ENOSYS = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS


def run(program: bytes, nr: int, arch: int, *args: int) -> int:
    """What the program returns for one call (``struct seccomp_data``, little-endian)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == 0x06:  # ret k
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += jt if taken else jf
        pc += 1


def decide(name: str, abi: str, *args: int, nests: bool = False) -> int:
    arch, column = ARCHES[abi]
    number = NUMBERS[name][column]
    assert number is not None
    return run(seccomp.program(nests), number, arch, *args)


@pytest.mark.parametrize("abi", ARCHES)
def test_each_listed_call_is_refused_on_each_abi(abi: str) -> None:
    for name in seccomp.REFUSED + seccomp.NAMESPACES:
        if NUMBERS[name][ARCHES[abi][1]] is not None:
            assert decide(name, abi) == EPERM, name
    for name in seccomp.ABSENT:
        assert decide(name, abi) == ENOSYS, name


@pytest.mark.parametrize("abi", ARCHES)
def test_arguments_decide_clone_ioctl_personality_and_socket(abi: str) -> None:
    assert decide("clone", abi, 0x11 | 0x01000000) == RET_ALLOW  # a fork
    assert decide("clone", abi, 0x10000000 | 0x11) == EPERM  # a new user namespace
    assert decide("ioctl", abi, 1, 0x5412) == EPERM  # TIOCSTI
    assert decide("ioctl", abi, 1, 0xFFFFFFFF00005412) == EPERM  # only the low 32 bits count
    assert decide("ioctl", abi, 1, 0x541C) == EPERM  # TIOCLINUX
    assert decide("ioctl", abi, 1, 0x5401) == RET_ALLOW  # TCGETS
    assert decide("personality", abi, 0) == RET_ALLOW
    assert decide("personality", abi, 0x0008) == EPERM
    for family in (0, 1, 2, 10, 16):
        assert decide("socket", abi, family) == RET_ALLOW
    for family in (17, 38, 40):  # packet, crypto, vsock
        assert decide("socket", abi, family) == RET_ERRNO | errno.EAFNOSUPPORT


@pytest.mark.parametrize("abi", ARCHES)
def test_a_nested_sandbox_keeps_namespaces_and_mounts(abi: str) -> None:
    for name in seccomp.NAMESPACES:
        assert decide(name, abi, nests=True) == RET_ALLOW, name
    assert decide("clone", abi, 0x10000000 | 0x11, nests=True) == RET_ALLOW
    for name in ("ptrace", "bpf", "keyctl", "perf_event_open"):
        assert decide(name, abi, nests=True) == EPERM
    assert decide("io_uring_setup", abi, nests=True) == ENOSYS


def test_other_abis_are_killed_and_x32_refused() -> None:
    program = seccomp.program(False)
    assert run(program, 20, 0x40000003) == RET_KILL_PROCESS  # i386 code on x86_64
    assert run(program, 39 | 0x40000000, AUDIT_ARCH_X86_64) == EPERM  # x32 getpid
    assert run(program, 39, AUDIT_ARCH_X86_64) == RET_ALLOW  # getpid
    assert run(program, 172, AUDIT_ARCH_AARCH64) == RET_ALLOW  # getpid


def test_bubblewrap_reads_it_from_a_file_on_an_inherited_fd(tmp_path: Path) -> None:
    folder = tmp_path
    argv = seccomp.with_filter(["/usr/bin/bwrap", "--unshare-all", "--", "true"], folder, False)
    if not seccomp.supported():
        assert argv == ["/usr/bin/bwrap", "--unshare-all", "--", "true"]
        return
    path = folder / "seccomp-run.bpf"
    assert argv == [
        "/bin/sh", "-c", 'exec "$@" 9<"$0"', str(path),
        "/usr/bin/bwrap", "--seccomp", "9", "--unshare-all", "--", "true",
    ]  # fmt: skip
    assert path.read_bytes() == seccomp.program(False)
    assert seccomp.supported("aarch64") and not seccomp.supported("riscv64")
