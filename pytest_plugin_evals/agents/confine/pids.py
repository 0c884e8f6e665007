"""An unconfined run's own PID namespace: nothing of the sandbox but that.

A run made with ``--eval-unconfined`` sees and reaches what the operator does (files, network,
sockets); where bubblewrap can make a PID namespace, it is still started in one of its own,
with ``--die-with-parent``. The kernel ends every process of a PID namespace when its first
process ends, so whatever the agent started — in a session of its own (``setsid``), double
forked, a daemon — ends with the run, and with the controller when that is killed with
SIGKILL (bubblewrap dies with its parent). Where it cannot, the run is started as it is, and
what it left behind is found by its tag (:func:`pytest_plugin_evals.util.process.kill_tagged`)
at the end of the run, or by the next session.
"""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from pytest_plugin_evals.util.process import probe

_lock = threading.Lock()
_probed: list[bool] = []


def _prefix(cwd: Path) -> list[str] | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None or not sys.platform.startswith("linux"):
        return None
    return [
        bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--die-with-parent",
        "--chdir", str(cwd), "--",
    ]  # fmt: skip


def available() -> bool:
    """Whether bubblewrap can give a run a PID namespace here (asked once per process)."""
    with _lock:
        if not _probed:
            prefix = _prefix(Path("/"))
            _probed.append(prefix is not None and probe([*prefix, "true"])[0] == 0)
        return _probed[0]


def own_pids(argv: Sequence[str], cwd: Path) -> list[str]:
    """``argv`` started in a PID namespace of its own when this machine can make one, else
    ``argv`` as it is. Only the namespace of process IDs is its own: the file system (all of
    it, writable as for the operator), the network and the user are the operator's."""
    prefix = _prefix(cwd) if available() else None
    return [*prefix, *argv] if prefix is not None else list(argv)
