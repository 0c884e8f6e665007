"""Test plumbing: run pytester sessions as users run them, with and without xdist."""

from __future__ import annotations

import gc
import json
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml  # noqa: F401

AGENT = Path(__file__).parent / "agents" / "scripted_agent.py"

# PyYAML is imported above, once for the whole test process: the plugin imports it only when it
# finds a suite, so the first import would happen inside a pytester in-process run, which drops
# the modules first imported in it afterwards — and PyYAML's C parser cannot be loaded twice.
# The package's own modules likewise, below: the plugin imports most of them only in a session
# that holds evals, so the first in-process run would import them and drop them after, and the
# next would import second copies whose classes are not the first's (a LoadError of one copy is
# not an instance of the other's, and was then taken for a case).


def _import_the_package() -> None:
    import importlib
    import pkgutil

    import pytest_plugin_evals

    for found in pkgutil.walk_packages(pytest_plugin_evals.__path__, "pytest_plugin_evals."):
        if not found.name.endswith("__main__"):
            importlib.import_module(found.name)


_import_the_package()


def pytest_configure(config: pytest.Config) -> None:
    """A suite started with SIGINT ignored (``bash scripts/test.sh &`` from a script) would
    hand that to every session it starts, and the tests that press Ctrl-C would send a signal
    no session takes: take SIGINT as Python does by default, so they test what they mean."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``plugin_args`` runs a session in one process; a test marked ``workers`` (the worker
    boundary is what it tests: what crosses from workers to the controller) runs it again with
    two pytest-xdist workers.

    The rule for ``workers``: mark a test when its assertion is about something a worker
    changes — reports or records crossing to the controller (outcomes, notes, load errors,
    reused runs, the merged document), the controller's progress line and terminal table,
    run-ahead, signals and interruption. Do not mark it when the assertion is about what is
    decided the same way in either process (option parsing, keys, suite loading, scoring
    rules): one ``-n 2`` test per feature area is enough, and that test carries the mark."""
    if "plugin_args" in metafunc.fixturenames:
        both = metafunc.definition.get_closest_marker("workers") is not None
        modes = ["-n0", "-n2"] if both else ["-n0"]
        metafunc.parametrize("plugin_args", modes, ids=[m[1:] for m in modes], indirect=True)


#: The integration modules left out of the inner loop (``-m "not e2e and not slow"`` over the unit,
#: integration and architecture folders): each spends tens of seconds of sessions, many with
#: two xdist workers, or waits on purpose (timeouts, rate-limit pauses, signals, a second
#: session on a busy folder). The inner loop keeps a session of each feature elsewhere
#: (``compare_last``: ``--eval-compare last`` in test_verdict_sessions, ``replay:last`` in
#: test_judge_agreement; the sessions each kind of session takes as ``last``:
#: tests/unit/test_engine_selected.py).
SLOW_MODULES = frozenset(
    f"test_{name}"
    for name in (
        "shards", "reruns_and_selection", "failure_reports", "rate_limit_retries",
        "several_agents", "merge_as_written", "progress", "interruptions",
        "one_session_per_folder", "baseline_plugin", "replay_and_scaffold",
        "judge_graders", "evidence", "compare", "collection", "scripted_claude",
        "run_ahead", "reuse", "skill_collections", "compare_last",
    )
)  # fmt: skip

#: Single tests left out of the inner loop in modules that otherwise belong to it: each spends
#: tens of seconds (tens of sandboxed agent runs, four xdist workers, a flood of output),
#: seconds waiting on purpose (a timeout, a pause, a sleeping agent, a held slot or lock),
#: seconds starting the real agent CLIs (each installed binary's version), or is a Monte-Carlo
#: check of a statistical method (thousands of simulated sessions: the inner loop keeps the
#: exact tests of the same methods), or runs a session again in a pseudo-terminal (the inner
#: loop reads the same lines from a captured session).
SLOW_TESTS = frozenset(
    (
        "test_sequential.py::test_the_exact_chance_is_what_a_simulation_finds",
        "test_sequential.py::test_looking_five_times_keeps_false_calls_at_five_percent",
        "test_sequential.py::test_without_the_boundary_looking_three_times_errs_more",
        "test_decisions.py::test_false_decisions_among_unchanged_cases_stay_below_the_rate",
        "test_stats.py::test_partial_score_interval_keeps_its_coverage_at_small_n",
        "test_trigger_change.py::test_each_differences_interval_covers_the_true_difference",
        "test_trigger_change.py::test_an_arms_f1_interval_covers_its_f1",
        "test_sequential_runs.py::test_a_cmd_agent_runs_ahead_up_to_the_next_look",
        "test_sequential_runs.py::test_the_least_certain_case_runs_first_under_xdist",
        "test_sequential_operating.py::test_the_enumeration_is_what_the_controller_does",
        "test_sequential_operating.py::test_the_top_ups_exact_chance_is_what_a_simulation_finds",
        "test_stats.py::test_the_new_case_interval_covers_new_draws",
        "test_efficiency_stats.py::test_the_interval_covers_on_heavy_tails",
        "test_formats.py::test_two_workers_give_the_same_document",
        "test_hostile_output.py::test_a_flood_of_output_is_cut_and_the_controller_stays_small",
        "test_agents.py::test_timeout_kills_the_process_group",
        "test_bounded_grading.py::test_ctrl_c_stops_grading",
        "test_trigger_baseline.py::test_in_an_80_column_terminal_the_table_fits",
        "test_grader_discrimination.py::test_on_a_terminal_the_line_is_whole",
        "test_judges.py::test_a_reply_slower_than_the_timeout_is_a_judge_failure",
        "test_confine.py::test_its_files_and_folders_are_bounded",
        "test_confine.py::test_the_watchdog_finds_the_runs_processes_in_its_cgroup_without_listing_the_machine",
        "test_mocks_agent.py::test_a_stand_in_process_plays_the_server",
        "test_agent_registry.py::test_the_installed_binary_is_the_declared_version",
    )
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what drives the real agent CLIs (``e2e``) and headless Chromium (``browser``) by
    their folders, and schedule the slow folders first (with ``--dist worksteal`` the workers
    then end together)."""
    root = Path(__file__).parent

    def folder(item: pytest.Item) -> str:
        path = Path(str(item.path))
        return path.relative_to(root).parts[0] if path.is_relative_to(root) else ""

    for item in items:
        if folder(item) in ("e2e", "browser"):
            item.add_marker(folder(item))
        elif (
            (folder(item) == "integration" and item.path.stem in SLOW_MODULES)
            or f"{item.path.name}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS
            or _with_two_workers(item)
        ):
            item.add_marker("slow")
    rank = {"e2e": 0, "browser": 1, "integration": 2}
    items.sort(key=lambda item: rank.get(folder(item), 3))


def _with_two_workers(item: pytest.Item) -> bool:
    """The ``-n 2`` rerun of a test marked ``workers``: the inner loop runs its ``-n 0`` one (each
    such session starts two more interpreters; the whole suite runs both)."""
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("plugin_args") == "-n2"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the collected tree out of the garbage collector's work: every later collection
    would walk its thousands of objects again (each in-process session makes many)."""
    gc.freeze()


@pytest.fixture
def plugin_args(request: pytest.FixtureRequest) -> list[str]:
    """The pytest options of a session as users run it (see :func:`pytest_generate_tests`)."""
    return [request.param, "-p", "no:cacheprovider"]


@pytest.fixture
def scripted_agent(pytester: pytest.Pytester) -> Callable[[list[dict[str, Any]]], str]:
    """Write agent rules and return the ``--eval-agent`` value that runs them (other rules,
    another file: two agents of one session keep their own rules; the same rules, the same
    spec)."""
    written: dict[str, Path] = {}

    def make(rules: list[dict[str, Any]]) -> str:
        text = json.dumps(rules)
        if text not in written:
            n = len(written)
            name = "agent-rules.json" if n == 0 else f"agent-rules-{n}.json"
            written[text] = pytester.path / name
        path = written[text]
        path.write_text(text, encoding="utf-8")
        return "cmd:" + shlex.join([sys.executable, str(AGENT), str(path)])

    return make


@pytest.fixture
def read_doc(pytester: pytest.Pytester) -> Callable[..., dict[str, Any]]:
    """Read a JSON result document the session under test wrote."""

    def read(name: str = "out.json") -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
        return doc

    return read


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The real Claude Code binary: ``$EVAL_CLAUDE_BIN``, else ``claude`` on PATH.

    Outside CI the tests that need it skip when it is absent; in CI (``$CI`` set) they fail.
    """
    found = os.environ.get("EVAL_CLAUDE_BIN") or shutil.which("claude")
    if found:
        return found
    reason = "the claude binary was not found (set EVAL_CLAUDE_BIN or put claude on PATH)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


#: Where scripts/setup.sh installs the other agent CLIs the end-to-end tests drive.
AGENT_CLIS = Path(__file__).resolve().parents[1] / ".ci" / "agents" / "node_modules" / ".bin"


def agent_cli(name: str) -> str:
    """An agent CLI's binary for the end-to-end tests: ``$EVAL_<NAME>_BIN``, else the one
    scripts/setup.sh installed, else ``name`` on PATH. Outside CI a test that needs a missing
    one skips; in CI (``$CI`` set) it fails."""
    found = os.environ.get(f"EVAL_{name.upper()}_BIN")
    if not found and (AGENT_CLIS / name).exists():
        found = str(AGENT_CLIS / name)
    found = found or shutil.which(name)
    if found:
        return found
    variable = f"EVAL_{name.upper()}_BIN"
    reason = f"the {name} binary was not found (run scripts/setup.sh or set {variable})"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)
