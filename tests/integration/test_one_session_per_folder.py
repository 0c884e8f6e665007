"""Two sessions given one ``--eval-output-dir`` never delete or mix each other's runs: while one
uses the folder, the other is refused with one line naming the first one's PID (xdist workers
of one session share the folder); a folder a finished session left is replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import reap, write_tree

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="results folders are locked on POSIX"
)

Agent = Callable[[list[dict[str, Any]]], str]

BUSY = (
    "ERROR: --eval-output-dir {out}: another pytest session (PID {pid}) is using this results "
    "folder; wait for it to end, or give this session another --eval-output-dir"
)


def suite(root: Path) -> None:
    for name in ("alpha", "beta"):
        write_tree(
            root,
            {
                f"evals/{name}/prompt.md": f"---\nruns: 1\n---\nSay {name}.\n",
                f"evals/{name}/graders/ok.md": f"---\ntype: regex\npattern: {name}\n---\n",
            },
        )


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def wait_for(path: Path, proc: subprocess.Popen[bytes], seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def kept_runs(out: Path) -> list[str]:
    return sorted(p.name.rpartition("-")[0] for p in (out / "runs").iterdir() if p.is_dir())


def test_a_second_session_on_a_folder_in_use_is_refused(
    pytester: pytest.Pytester, scripted_agent: Agent
) -> None:
    """Both sessions with two workers: the first one's workers share the folder, the second
    one (controller and workers alike) is turned away in one line; a later session replaces
    what the first left."""
    first = second = "-n2"
    suite(pytester.path)
    out = pytester.path / "out"
    started = pytester.path / "started"
    release = pytester.path / "release"
    # The first session's runs go on until the second session has been turned away (on a
    # loaded machine, starting that one can take longer than any fixed sleep): at most 120 s.
    slow = scripted_agent([{"match": "Say", "reply": "alpha beta"}])
    hold = (
        f"touch {started}; i=0; "
        f"while [ ! -e {release} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done"
    )
    slow = slow.replace("cmd:", f"cmd:sh -c '{hold}; exec \"$@\"' agent ", 1)
    quick = scripted_agent([{"match": "Say", "reply": "alpha beta"}])
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals", first, "-p", "no:cacheprovider",
         "--eval-agent", slow, "--eval-output-dir", "out", "--eval-json", "first.json",
         "--eval-unconfined"],  # the agent says it started outside its run
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env(),
    )  # fmt: skip
    try:
        wait_for(started, proc)  # the first session is making its runs in out/
        refused = pytester.runpytest(
            "evals", second, "-p", "no:cacheprovider", "--eval-agent", quick,
            "--eval-output-dir", "out", "--eval-json", "second.json",
        )  # fmt: skip
        release.touch()
        output, _ = proc.communicate(timeout=180)
    finally:
        reap(proc)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in refused.errlines if line] == [BUSY.format(out=out, pid=proc.pid)]
    assert "Traceback" not in refused.stdout.str() + refused.stderr.str()
    assert not (pytester.path / "second.json").exists()
    # The first session went on: its runs were neither deleted nor mixed with another's.
    assert proc.returncode == 0, output.decode()
    doc = json.loads((pytester.path / "first.json").read_text(encoding="utf-8"))
    assert sorted(c["name"] for c in doc["cases"]) == ["alpha", "beta"]
    traces = [Path(r["tracePath"]) for c in doc["cases"] for r in c["arms"]["with"]]
    assert len(traces) == 2 and all(t.is_file() for t in traces)
    assert kept_runs(out) == ["alpha", "beta"]
    # Once it has ended, the folder is free: a later session replaces what it left.
    later = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", "--eval-agent", quick,
        "--eval-output-dir", "out", "-k", "alpha",
    )  # fmt: skip
    assert later.ret == 0
    assert kept_runs(out) == ["alpha"]


HOLDER = """\
import fcntl, os, sys, time
lock = open(sys.argv[1], "a+")
fcntl.flock(lock, fcntl.LOCK_EX)
lock.seek(0); lock.truncate(); lock.write(f"{os.getpid()}\\n"); lock.flush()
print("held", flush=True)
time.sleep(120)
"""


def test_a_claim_lock_held_elsewhere_is_one_line_not_a_hang(
    pytester: pytest.Pytester, scripted_agent: Agent
) -> None:
    """A claim lock another process holds stops the session after a bounded wait, in one line
    (the session's first process checks it, before any run or worker starts)."""
    suite(pytester.path)
    out = pytester.path / "out"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out / ".runs.lock")], stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        start = time.monotonic()
        result = pytester.runpytest(
            "evals", "-n0", "-p", "no:cacheprovider", "--eval-output-dir", "out",
            "--eval-agent", scripted_agent([{"match": "Say", "reply": "alpha beta"}]),
        )  # fmt: skip
        waited = time.monotonic() - start
    finally:
        holder.kill()
        holder.communicate()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.errlines if line] == [
        f"ERROR: --eval-output-dir {out}: another process (PID {holder.pid}) has held "
        f"{out / '.runs.lock'} for more than 5 s; wait for it to end, or give this session "
        "another --eval-output-dir"
    ]
    assert waited < 120  # the lock is given up after 5 s; a loaded machine starts slowly
    assert not (out / "runs").exists()
