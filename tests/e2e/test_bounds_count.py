"""Every bound counts what it bounds: a hostile ``cmd:`` agent in the sandbox holds memory
where the old count did not look (``MAP_SHARED`` pages, a detached System V segment,
``/dev/shm``), writes to the tmpfs
folders of the sandbox (its root, ``/dev``, a hidden folder), keeps removed files open, and
makes many empty files. Each
is refused, or ends the run as the infrastructure error ``bound`` naming the limit. CI runs
this module as root (a cgroup counts the run's memory) and again as an ordinary user (the
processes' PSS does)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

#: A ``cmd:`` agent that runs its script (sh, with ``$PYTHON`` its own interpreter) and
#: reports what it printed as a tool call.
AGENT = """\
import json, os, subprocess, sys
sys.stdin.read()
env = dict(os.environ, PYTHON=sys.executable)
done = subprocess.run(["sh", sys.argv[1]], capture_output=True, text=True, timeout=60, env=env)
with open(os.environ["EVAL_TRACE_FILE"], "a") as fh:
    call = {"type": "tool_call", "name": "Bash", "input": {"command": "hostile"},
            "output": done.stdout + done.stderr}
    fh.write(json.dumps(call) + "\\n")
print("held")
"""

#: Fills 300 MiB of shared anonymous memory page by page (no private copy of it), then waits.
SHARED = """\
"$PYTHON" -c '
import mmap, time
size = 300 * 2**20
m = mmap.mmap(-1, size, mmap.MAP_SHARED)
for i in range(0, size, 4096):
    m[i] = 1
print("FILLED", flush=True)
time.sleep(15)
'
"""

#: Fills a 300 MiB System V shared memory segment, detaches it (no process maps it any
#: more: it stays in the run's IPC namespace), then waits.
DETACHED = """\
"$PYTHON" -c '
import ctypes, time
libc = ctypes.CDLL(None)
libc.shmat.restype = ctypes.c_void_p
size = 300 * 2**20
segment = libc.shmget(0, ctypes.c_size_t(size), 0o1600)
address = libc.shmat(segment, None, 0)
ctypes.memset(address, 1, size)
libc.shmdt(ctypes.c_void_p(address))
print("DETACHED", flush=True)
time.sleep(15)
'
"""

#: Writes 8 MiB into each tmpfs folder of the sandbox; says which took it.
TMPFS_WRITES = """\
for where in / /dev "$EVAL_PLUGIN_DIR/evals"; do
  if head -c 8388608 /dev/zero > "$where/filler" 2>/dev/null; then
    echo "WROTE $where"
  else
    echo "REFUSED $where"
  fi
done
"""


def session(
    pytester: pytest.Pytester, script: str, *flags: str
) -> tuple[pytest.RunResult, dict[str, Any]]:
    """One run of a ``cmd:`` agent that runs ``script`` (sh) in its sandbox; the session's
    result and the run's record."""
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "hog", "version": "1.0.0"}',
            "evals/hog/prompt.md": "---\nruns: 1\n---\nHold what you can.\n",
            "evals/hog/graders/any.md": "---\ntype: regex\npattern: .\n---\n",
        },
    )
    (pytester.path / "hostile.sh").write_text(script, encoding="utf-8")
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")
    agent = [sys.executable, str(pytester.path / "agent.py"), str(pytester.path / "hostile.sh")]
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-ablation", "none", "--eval-json", "out.json",
        "--eval-agent", "cmd:" + shlex.join(agent), *flags,
    )  # fmt: skip
    out = pytester.path / "out.json"
    assert out.exists(), result.stdout.str()[-3000:]
    doc = json.loads(out.read_text(encoding="utf-8"))
    (case,) = doc["cases"]
    (run,) = case["arms"]["with"]
    return result, run


def assert_bound(result: pytest.RunResult, run: dict[str, Any], limit: str) -> None:
    """The run ended as the infrastructure error ``bound``, naming ``limit``."""
    assert run["infraError"] == "bound", (run, result.stdout.str()[-3000:])
    assert limit in run["error"], run["error"]
    result.assert_outcomes(errors=1)


@pytest.mark.parametrize("script", [SHARED, DETACHED], ids=["shared-mapping", "detached-sysv"])
def test_shared_memory_counts_against_the_memory_bound(
    pytester: pytest.Pytester, script: str
) -> None:
    """``MAP_SHARED`` pages, and a System V segment no process attaches any more."""
    result, run = session(pytester, script, "--eval-max-memory", "64M")
    assert_bound(result, run, "the run's memory went over 64 MiB")
    assert run["durationSeconds"] < 12


def test_dev_shm_counts_against_the_bounds(pytester: pytest.Pytester) -> None:
    script = "head -c 314572800 /dev/zero > /dev/shm/filler; echo wrote=$?; sleep 15\n"
    result, run = session(pytester, script, "--eval-max-memory", "64M", "--eval-max-disk", "64M")
    assert_bound(result, run, "over 64 MiB")
    assert run["durationSeconds"] < 12


def test_a_removed_file_held_open_counts_against_the_disk_bound(
    pytester: pytest.Pytester,
) -> None:
    # 3 files of 100 MiB in /tmp and /dev/shm, each removed while a process keeps it open.
    script = (
        "exec 3<> /tmp/a 4<> /tmp/b 5<> /dev/shm/c; rm /tmp/a /tmp/b /dev/shm/c;"
        " for fd in 3 4 5; do head -c 104857600 /dev/zero >&$fd; done; echo held; sleep 15\n"
    )
    result, run = session(pytester, script, "--eval-max-disk", "64M")
    assert_bound(result, run, "the run's folders went over 64 MiB")
    assert run["durationSeconds"] < 12


def test_the_sandboxs_root_dev_and_hidden_folders_are_read_only(
    pytester: pytest.Pytester,
) -> None:
    result, run = session(pytester, TMPFS_WRITES)
    assert run["infraError"] is None, run
    result.assert_outcomes(passed=1)
    meta = json.loads((Path(run["tracePath"]).parent / "meta.json").read_text("utf-8"))
    output = "\n".join(str(c.get("output") or "") for c in meta["toolCalls"])
    assert output.count("REFUSED") == 3 and "WROTE" not in output, output
    assert not (pytester.path / "evals" / "filler").exists()


def test_empty_files_count_against_the_files_bound(pytester: pytest.Pytester) -> None:
    script = "mkdir many && cd many && i=0; while [ $i -lt 5000 ]; do : > f$i; i=$((i+1)); done\n"
    script += "echo made; sleep 15\n"
    result, run = session(pytester, script, "--eval-max-files", "1000")
    assert_bound(result, run, "the run's folders went over 1000 files")
    assert run["durationSeconds"] < 12
