"""The seccomp filter: a ``cmd:`` agent in the sandbox makes the system calls no run needs
(io_uring, the kernel keyring, bpf, perf events, ptrace of another process, mount, the x32
ABI, a vsock socket) and each is refused; what a run does need (processes, sockets of the
usual families, the default personality) still works. CI runs this module as root and again
as an ordinary user."""

from __future__ import annotations

import json
import platform
import shlex
import sys
from typing import Any

import pytest

from tests.helpers import write_tree

#: Calls each system call through ctypes (x86_64 or aarch64 numbers) with arguments that
#: would succeed unfiltered where the kernel lets an unprivileged process, and prints what
#: each returned: "ok" or the errno's name.
AGENT = """\
import ctypes, errno, json, os, platform, signal, socket, subprocess, sys, time
sys.stdin.read()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
X86 = platform.machine() == "x86_64"
NR = {"io_uring_setup": (425, 425), "keyctl": (250, 219), "bpf": (321, 280),
      "perf_event_open": (298, 241), "ptrace": (101, 117), "mount": (165, 40),
      "personality": (135, 92), "unshare": (272, 97)}

def call(name, *args):
    number = NR[name][0 if X86 else 1] if isinstance(name, str) else name
    ctypes.set_errno(0)
    got = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if got >= 0:
        return "ok"
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

def address(buffer):
    return ctypes.addressof(buffer)

out = {}
params = ctypes.create_string_buffer(120)
out["io_uring_setup"] = call("io_uring_setup", 4, address(params))
out["keyctl"] = call("keyctl", 0, -3, 1)  # KEYCTL_GET_KEYRING_ID of the session keyring
attr = ctypes.create_string_buffer(128)  # PERF_TYPE_SOFTWARE, CPU clock, user space only
ctypes.memmove(attr, (1).to_bytes(4, "little") + (128).to_bytes(4, "little"), 8)
ctypes.memmove(ctypes.addressof(attr) + 40, (0b1100001).to_bytes(8, "little"), 8)
out["perf_event_open"] = call("perf_event_open", address(attr), 0, -1, -1, 0)
out["bpf"] = call("bpf", 0, 0, 0)  # BPF_MAP_CREATE, no attributes
child = subprocess.Popen(["sleep", "30"])
time.sleep(0.2)
out["ptrace"] = call("ptrace", 16, child.pid, 0, 0)  # PTRACE_ATTACH to its own child
child.kill()
child.wait()
out["mount"] = call("mount", address(ctypes.create_string_buffer(b"none")),
                    address(ctypes.create_string_buffer(b"/tmp")),
                    address(ctypes.create_string_buffer(b"tmpfs")), 0, 0)
out["unshare"] = call("unshare", 0x10000000)  # CLONE_NEWUSER
if X86:
    out["x32 getpid"] = call(0x40000000 | 39)
try:
    socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK: past every network namespace
    out["vsock"] = "ok"
except OSError as exc:
    out["vsock"] = errno.errorcode.get(exc.errno, str(exc.errno))
# What a run needs.
out["personality"] = call("personality", 0)
out["subprocess"] = subprocess.run(["sh", "-c", "echo fine"], capture_output=True,
                                   text=True).stdout.strip()
for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
    socket.socket(family, socket.SOCK_STREAM).close()
out["sockets"] = "ok"
print(json.dumps(out))
"""

REFUSED = {
    "io_uring_setup": "ENOSYS",
    "keyctl": "EPERM",
    "bpf": "EPERM",
    "perf_event_open": "EPERM",
    "ptrace": "EPERM",
    "mount": "EPERM",
    "unshare": "EPERM",
    "vsock": "EAFNOSUPPORT",
}
NEEDED = {"personality": "ok", "subprocess": "fine", "sockets": "ok"}


def answer(doc: dict[str, Any]) -> dict[str, str]:
    (case,) = doc["cases"]
    (run,) = case["arms"]["with"]
    assert run["infraError"] is None, run
    found: dict[str, str] = json.loads(run["answer"])
    return found


@pytest.mark.skipif(
    platform.machine() not in ("x86_64", "aarch64"), reason="the filter is for x86_64 and aarch64"
)
def test_the_calls_no_run_needs_are_refused_and_a_run_still_works(
    pytester: pytest.Pytester,
) -> None:
    write_tree(
        pytester.path,
        {
            "agent.py": AGENT,
            "kit/.claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
            "kit/evals/probe/prompt.md": "---\nruns: 1\n---\nProbe.\n",
            "kit/evals/probe/graders/done.md": "---\ntype: regex\npattern: sockets\n---\n",
        },
    )
    spec = "cmd:" + shlex.join([sys.executable, str(pytester.path / "agent.py")])
    result = pytester.runpytest(
        "kit/evals", "-p", "no:cacheprovider", "--eval-ablation", "none",
        "--eval-agent", spec, "--eval-json", "out.json",
    )  # fmt: skip
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    found = answer(doc)
    expected = {**REFUSED, **NEEDED}
    if platform.machine() == "x86_64":
        expected["x32 getpid"] = "EPERM"
    assert found == expected
    result.assert_outcomes(passed=1)
