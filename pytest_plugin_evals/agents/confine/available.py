"""Whether agent processes can be confined on this machine: Linux, the tools a confined run
needs (:data:`NEEDED`) and the namespaces bubblewrap makes (probed once per process)."""

from __future__ import annotations

import shutil
import sys
import threading

from pytest_plugin_evals.util.process import probe

#: The tools a confined run needs on this machine, by command, with what provides it.
NEEDED = {"bwrap": "bubblewrap", "socat": "socat", "prlimit": "util-linux (prlimit)"}


def _unconfined_hint() -> str:
    return "or pass --eval-unconfined to run it unconfined on purpose"


def problem() -> str | None:
    """Why agent processes cannot be confined on this machine (one line), or None."""
    if not sys.platform.startswith("linux"):
        return (
            f"cannot confine the agent on this system ({sys.platform}): its sandbox needs Linux "
            f"namespaces — {_unconfined_hint()}"
        )
    missing = [package for tool, package in NEEDED.items() if shutil.which(tool) is None]
    if missing:
        return (
            f"cannot confine the agent: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed (Debian/Ubuntu: apt install "
            f"bubblewrap socat util-linux) — {_unconfined_hint()}"
        )
    why = _namespaces_problem()
    if why is not None:
        return f"cannot confine the agent: {why} — {_unconfined_hint()}"
    return None


_probe_lock = threading.Lock()
_probed: list[str | None] = []


def _namespaces_problem() -> str | None:
    """Whether bubblewrap can make the namespaces a run needs here (asked once per process)."""
    with _probe_lock:
        if not _probed:
            _probed.append(_probe())
        return _probed[0]


def _probe() -> str | None:
    argv = [
        tool_path("bwrap"), "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
        "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true",
    ]  # fmt: skip
    status, said = probe(argv)
    if status == 0:
        return None
    if status is None:
        return f"bubblewrap could not start ({said})"
    lines = said.strip().splitlines()
    detail = lines[-1] if lines else f"exit {status}"
    return (
        f"user namespaces are not available here ({detail}; see the kernel's "
        "user.max_user_namespaces and kernel.unprivileged_userns_clone)"
    )


def tool_path(name: str) -> str:
    """Where this machine has one of the tools a confined run needs (:data:`NEEDED`)."""
    return shutil.which(name) or name
