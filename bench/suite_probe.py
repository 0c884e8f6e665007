"""A pytest plugin for ``bench_suite.py``: the CPU each test's process tree used.

Loaded with ``-p suite_probe`` (``bench/`` on ``PYTHONPATH``) in a session without xdist: one
test at a time. Where ``bench_suite.py`` could put the session in a CPU-accounting cgroup of
its own (``$SUITE_PROBE_CGROUP``: cgroup v1 ``cpuacct.usage`` or v2 ``cpu.stat``), a test's CPU
is what that cgroup used meanwhile: the session's process and every process it started, the
sandboxed agent CLIs too, and nothing else that runs on the machine — so the figures hold on a
shared machine. Elsewhere it is ``getrusage`` of the session and of the children it reaped
(a run's sandbox that is ended, not reaped, is then missed). At the end it writes
``[[node id, wall s, CPU s], ...]`` to ``$SUITE_PROBE_OUT``. Measurement only: nothing here is
part of the plugin or its tests.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from pathlib import Path

import pytest

ROWS: list[tuple[str, float, float]] = []


def tree_cpu() -> float:
    """Seconds of CPU the session's process tree has used (see the module's docstring)."""
    usage = os.environ.get("SUITE_PROBE_CGROUP")
    if usage:
        text = Path(usage).read_text(encoding="ascii")
        if usage.endswith("cpu.stat"):  # v2: usage_usec
            fields = dict(line.split() for line in text.splitlines() if line.strip())
            return int(fields["usage_usec"]) / 1e6
        return int(text) / 1e9  # v1: cpuacct.usage, in nanoseconds
    own, reaped = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    cpu, wall = tree_cpu(), time.perf_counter()
    yield
    ROWS.append((item.nodeid, time.perf_counter() - wall, tree_cpu() - cpu))


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("SUITE_PROBE_OUT")
    if out and ROWS and not hasattr(config, "workerinput"):
        with open(out, "w", encoding="utf-8") as f:
            json.dump(ROWS, f)
