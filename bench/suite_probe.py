"""A pytest plugin for ``bench_suite.py``: the CPU the whole machine used during each test.

Loaded with ``-p suite_probe`` (``bench/`` on ``PYTHONPATH``) in a session without xdist: one
test at a time, so on an otherwise idle machine the machine's CPU meanwhile (``/proc/stat``) is
the test's own, the processes it started included — the sandboxed agent CLIs too, whose CPU
no ``getrusage`` of ours sees. At the end it writes ``[[node id, wall s, CPU s], ...]`` to
``$SUITE_PROBE_OUT``. Measurement only: nothing here is part of the plugin or its tests.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator

import pytest
from bench_reference import machine_cpu

ROWS: list[tuple[str, float, float]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    cpu, wall = machine_cpu(), time.perf_counter()
    yield
    ROWS.append((item.nodeid, time.perf_counter() - wall, machine_cpu() - cpu))


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("SUITE_PROBE_OUT")
    if out and ROWS and not hasattr(config, "workerinput"):
        with open(out, "w", encoding="utf-8") as f:
            json.dump(ROWS, f)
