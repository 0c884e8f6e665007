"""A pytest plugin for ``bench_breakdown.py``: where each eval run's CPU time goes.

Loaded with ``-p eval_probe`` (``bench/`` on ``PYTHONPATH``), it wraps the steps of a run —
the sandbox and home set-up, the environment, the confinement, the child, reading its stream,
grading, recording, redaction, clean-up — and pytest's reporting hooks, and accounts each
step's CPU time (this process's, exclusive of the steps nested in it) and the CPU time of the
children it waited for. Meant for ``-n 0 --eval-run-ahead off``: one run at a time, so the
process's CPU clock is the run's. At the end each process writes ``<EVAL_PROBE_OUT>/<id>.json``.
Measurement only: nothing here is part of the plugin.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

#: Step name -> [our CPU seconds (exclusive), children's CPU seconds, calls].
TOTALS: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
_STACK: list[list[float]] = []  # per open step: CPU of nested steps, so far
MARKS: dict[str, float] = {}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(step: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, kids = time.process_time(), _children_cpu()
        _STACK.append([0.0])
        try:
            return fn(*args, **kwargs)
        finally:
            nested = _STACK.pop()[0]
            spent = time.process_time() - start
            totals = TOTALS[step]
            totals[0] += spent - nested
            totals[1] += _children_cpu() - kids
            totals[2] += 1
            if _STACK:
                _STACK[-1][0] += spent

    return wrapper


#: Our CPU while the child runs: its start, its stream, the network relay, the watchdog.
CHILD = "while the child runs: its start, its stream read, network relay, watchdog"
#: (module, attribute path, step): what is wrapped, where the run path looks it up.
WRAPPED = [
    ("pytest_plugin_evals.plugin.runs", "RunMaker.make", "limiter and run options"),
    ("pytest_plugin_evals.runner", "execute_run", "runner (the rest)"),
    ("pytest_plugin_evals.runner", "Sandbox.create", "sandbox and home set-up"),
    ("pytest_plugin_evals.runner", "allowed_environment", "environment"),
    ("pytest_plugin_evals.runner", "prepare_mocks", "mocks set-up"),
    ("pytest_plugin_evals.agents.claude.agent", "ClaudeAgent.launch", "command line and settings"),
    ("pytest_plugin_evals.agents.claude.agent", "plan_tools", "command line and settings"),
    ("pytest_plugin_evals.agents.claude.agent", "copy_add_dirs", "plugin and context copy"),
    ("pytest_plugin_evals.agents.cli", "run_confined", "confinement: the rest"),
    ("pytest_plugin_evals.agents.confine", "prepare", "confinement: bwrap argv, network, cgroup"),
    ("pytest_plugin_evals.agents.confine", "Confined.run", CHILD),
    ("pytest_plugin_evals.agents.cli", "run_process", CHILD),
    ("pytest_plugin_evals.agents.claude.agent", "parse_file", "parsing its stream"),
    ("pytest_plugin_evals.agents.launch", "finish", "parsing its stream"),
    ("pytest_plugin_evals.runner", "kill_tagged", "killing what it left"),
    ("pytest_plugin_evals.runner", "secrets_in", "redaction"),
    ("pytest_plugin_evals.runner", "Redactor.scrub", "redaction"),
    ("pytest_plugin_evals.runner", "grade_all", "grading"),
    ("pytest_plugin_evals.runner", "mark_inert", "recording"),
    ("pytest_plugin_evals.runner", "run_folder", "recording"),
    ("pytest_plugin_evals.runner", "record_run", "recording"),
    ("pytest_plugin_evals.runner", "Sandbox.remove", "clean-up"),
    ("pytest_plugin_evals.reporting.result", "summarize", "session end: the result"),
    ("pytest_plugin_evals.engine.outputs", "dumps_document", "session end: the JSON document"),
    ("pytest_plugin_evals.engine.outputs", "render_html", "session end: the HTML report"),
]


def _install() -> None:
    for module_name, path, step in WRAPPED:
        module = importlib.import_module(module_name)
        *owners, name = path.split(".")
        owner: Any = module
        for part in owners:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(step, getattr(owner, name)))


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    MARKS["start-up and imports"] = _cpu()
    _install()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    MARKS["collection"] = _cpu()


def _reporting() -> Generator[None, Any, Any]:
    start = time.process_time()
    result = yield
    spent = time.process_time() - start
    TOTALS["reporting (per item)"][0] += spent
    if _STACK:
        _STACK[-1][0] += spent
    return result


pytest_runtest_makereport = pytest.hookimpl(wrapper=True)(
    lambda item, call: (yield from _reporting())
)
pytest_runtest_logreport = pytest.hookimpl(wrapper=True)(lambda report: (yield from _reporting()))


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    start = time.process_time()
    _STACK.append([0.0])  # the steps wrapped in it (the result, the JSON, the HTML) apart
    result = yield
    nested = _STACK.pop()[0]
    TOTALS["session end: the rest (table, hooks)"][0] += time.process_time() - start - nested
    return result


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("EVAL_PROBE_OUT")
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "controller")
    collected = MARKS.get("collection", _cpu())
    doc = {
        "worker": worker,
        "start_up": MARKS.get("start-up and imports", 0.0),
        "collection": collected - MARKS.get("start-up and imports", 0.0),
        "total": _cpu(),
        "children_total": _children_cpu(),
        "steps": dict(TOTALS),
    }
    Path(out, f"{worker}-{os.getpid()}.json").write_text(json.dumps(doc, indent=1))
