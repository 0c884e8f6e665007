"""The pytest entry point (``pytest11: evals``): options, collection hooks, the controller session.

pytest imports this module in every session of an environment the plugin is installed in, evals
or none, so it imports no more than the options and what the collection hooks ask of every path,
and not pytest itself; the collectors, loaders, the modules of one option, the controller's
hooks and those for pytest-xdist and pytest-html are imported by the hook that first needs them
(``tests/architecture/test_start_up.py``). The controller's hooks are registered once the
session is an eval session (``settings.from_the_start``), else at the first eval item collected.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pluggy import HookimplMarker

from pytest_plugin_evals.plugin import keys
from pytest_plugin_evals.plugin.loaded import eval_item_class, record_of
from pytest_plugin_evals.plugin.options import add_options, read_settings, usage_error
from pytest_plugin_evals.settings import EvalSettings, from_the_start
from pytest_plugin_evals.suites.discover import evals_root, folder_notes, has_evals
from pytest_plugin_evals.suites.picks import case_arguments, picks_not_found
from pytest_plugin_evals.util.inert import is_inert
from pytest_plugin_evals.util.stop_sign import StopSign
from pytest_plugin_evals.util.tempdirs import shared_folder
from pytest_plugin_evals.util.timestamps import folder_stamp

if TYPE_CHECKING:
    import pytest

#: pytest's own marker (``pytest.hookimpl`` is this one), made from pluggy's: importing the entry
#: point imports no pytest.
hookimpl = HookimplMarker("pytest")

pytest_plugins = [
    "pytest_plugin_evals.plugin.fixtures",
    "pytest_plugin_evals.testing.fixtures",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "evals(case, arm, run, agent): an eval run (agent under --eval-agents); select with "
        "-m \"evals(arm='with')\"",
    )
    settings = config.stash[keys.settings_key] = read_settings(config)
    workerinput = getattr(config, "workerinput", None)
    given = {} if workerinput is None else workerinput  # what a worker's controller hands it
    config.stash[keys.stamp_key] = given.get("eval_stamp") or folder_stamp()
    option = config.option
    dist, collectonly = getattr(option, "dist", "no"), getattr(option, "collectonly", False)
    if workerinput is not None or from_the_start(settings, dist, collectonly):
        _share(config, given.get("eval_shared"))  # the option hooks share it
    _register_options(config, settings)
    if workerinput is None and keys.shared_key in config.stash:
        _register_controller(config, settings)


def pytest_itemcollected(item: pytest.Item) -> None:
    """The first eval item of a session that had no eval option starts the controller's hooks
    (before the items are modified and their collection is finished, which they watch)."""
    config = item.config
    if keys.shared_key in config.stash or hasattr(config, "workerinput"):
        return
    if eval_item_class() is not None:  # the items module is imported with the collectors
        _share(config, None)
        _register_controller(config, config.stash[keys.settings_key])


def _register_options(config: pytest.Config, settings: EvalSettings) -> None:
    """The hooks of the options given, in every process."""
    if settings.baseline_plugin is not None:
        from pytest_plugin_evals.plugin.baseline import BaselineHooks

        config.pluginmanager.register(BaselineHooks(config), "plugin-evals-baseline")
    if settings.compare is not None:
        from pytest_plugin_evals.plugin.compare import EarlierSession, earlier_key

        config.stash[earlier_key] = EarlierSession(config, settings)
        config.pluginmanager.register(config.stash[earlier_key], "plugin-evals-compare")
    if settings.agent == "replay:last":
        from pytest_plugin_evals.plugin.replay_last import ReplayLast

        config.pluginmanager.register(ReplayLast(config), "plugin-evals-replay-last")
    if settings.shard is not None:
        from pytest_plugin_evals.plugin.sharding import ShardSelection

        shards = ShardSelection(config, settings, settings.shard)
        config.pluginmanager.register(shards, "plugin-evals-shard")
    if settings.runs_auto is not None:
        from pytest_plugin_evals.plugin.rounds import register

        register(config, settings)


def _register_controller(config: pytest.Config, settings: EvalSettings) -> None:
    """The controller's hooks: the session, its writers and what it shows (never on an xdist
    worker)."""
    from pytest_plugin_evals.plugin.plan import register_plan

    register_plan(config, settings)
    from pytest_plugin_evals.plugin.session import EvalSession, session_key

    session = EvalSession(config, settings, config.stash[keys.stamp_key])
    config.stash[session_key] = session
    config.pluginmanager.register(session, "plugin-evals-session")
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_plugin_evals.plugin.xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(session), "plugin-evals-xdist")
    if config.pluginmanager.hasplugin("html"):
        from pytest_plugin_evals.plugin.html_extras import HtmlColumns

        columns = HtmlColumns(several_agents=bool(settings.agents))
        config.pluginmanager.register(columns, "plugin-evals-html")
    from pytest_plugin_evals.plugin.progress import register_progress

    register_progress(config, settings)  # silent in a session without eval runs


def pytest_unconfigure(config: pytest.Config) -> None:
    recording = sys.modules.get("pytest_plugin_evals.recording")
    if recording is not None and keys.shared_key in config.stash:
        # The results folder this process held for the session is free again.
        recording.release_results_folders(config.stash[keys.shared_key].name)
    if config.pluginmanager.get_plugin("plugin-evals-session") is None:
        return
    for name, plugin in config.pluginmanager.list_name_plugin():  # the stopping: its cleanup
        if name.startswith("plugin-evals-") and name != "plugin-evals-stopping":
            config.pluginmanager.unregister(plugin)
    del config.stash[sys.modules["pytest_plugin_evals.plugin.session"].session_key]  # loaded
    shutil.rmtree(config.stash[keys.shared_key], ignore_errors=True)


def _share(config: pytest.Config, given: str | None) -> None:
    folder = config.stash[keys.shared_key] = shared_folder(given)
    config.stash[keys.stop_key] = StopSign(folder / "stop.txt")


# -- collection -------------------------------------------------------------------------------


@hookimpl(wrapper=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> Any:
    """Kept runs are never collected: what an agent produced is not the project's tests; nor
    is what an evals folder's ``results/`` and ``mocks/`` hold. A case folder is collected
    though pytest's default ``norecursedirs`` would pass over its name (``evals/build``)."""
    ignored = yield
    if is_inert(collection_path):
        return True
    collect = sys.modules.get("pytest_plugin_evals.plugin.collect")
    if collect is None:
        return ignored
    if collect.trees(config).never_collected(collection_path):
        return True
    if ignored and collect.kept_case(collection_path, config):
        return False
    return ignored


@hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """Collect what a directory case's node id, or a file of a case, names on the command line."""
    config = session.config
    here, eval_paths = config.invocation_params.dir, config.stash[keys.settings_key].eval_paths
    found = None if config.option.pyargs else case_arguments(config.args, here, eval_paths)
    if found is None:
        return (yield)
    given = config.args
    config.args, config.stash[keys.case_picks_key] = found
    try:
        return (yield)
    finally:
        config.args = given


@hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A case folder of an evals folder (everything else is collected by pytest's own)."""
    eval_paths = parent.config.stash[keys.settings_key].eval_paths
    root = evals_root(path, eval_paths, at_top=parent.parent is None)  # the session: the top
    if root is not None:
        from pytest_plugin_evals.plugin.collect import trees

        trees(parent.config).read(root)
    collect = sys.modules.get("pytest_plugin_evals.plugin.collect")
    return None if collect is None else collect.eval_node(path, parent, "case_dir")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    collect = sys.modules.get("pytest_plugin_evals.plugin.collect")
    found = None if collect is None else collect.eval_node(file_path, parent, "suite_file")
    if found is not None or not has_evals(file_path):
        return found
    from pytest_plugin_evals.plugin.collect import PackageJsonFile

    return PackageJsonFile.from_parent(parent, path=file_path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if keys.case_picks_key in config.stash:
        picked = config.stash[keys.case_picks_key].values()
        missing = picks_not_found(pick for picks in picked for pick in picks)
        if missing:  # said as pytest says a test that is not there
            usage_error(*missing)
    settings = config.stash[keys.settings_key]
    eval_item = eval_item_class()
    if eval_item is not None and settings.runs_auto is not None:
        from pytest_plugin_evals.plugin.rounds import order_rounds

        order_rounds(items)
    if eval_item is None or (settings.case_glob is None and not settings.tags):
        return
    kept = [
        not isinstance(i, eval_item) or settings.selects(i.case.name, i.case.tags) for i in items
    ]
    if not all(kept):
        config.hook.pytest_deselected(items=[i for i, k in zip(items, kept, strict=True) if not k])
        items[:] = [i for i, k in zip(items, kept, strict=True) if k]


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items and eval_item_class() is not None:
        from pytest_plugin_evals.plugin.unselected import note_deselected

        note_deselected(items[0].config, items)


@hookimpl(tryfirst=True)  # a worker writes its list before xdist reports its items
def pytest_collection_finish(session: pytest.Session) -> None:
    if eval_item_class() is not None:
        from pytest_plugin_evals.plugin.unselected import settle

        settle(session)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int) -> None:
    """An ``evals`` folder without a case, in a session that collected nothing: one line that
    says what a case is, rather than pytest's bare "no tests ran"; and a JSON/YAML file there
    that is no suite: one line why."""
    config = terminalreporter.config
    notes = folder_notes(config.args, config.invocation_params.dir, exitstatus)
    if notes:
        from pytest_plugin_evals.reporting.terminal import plain

        for note in notes:
            terminalreporter.write_line(plain(note), yellow=True)


# -- running ----------------------------------------------------------------------------------


@hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Tell an eval item which item runs after it here (its run may be started early)."""
    if nextitem is not None and eval_item_class() is not None:
        item.stash[keys.next_item_key] = nextitem
    return (yield)


@hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Soft checks (the ``eval_checks`` fixture) fail the test once, at its end."""
    __tracebackhide__ = True  # the failure is the list of checks, not this hook
    try:
        result = yield
    except BaseException as exc:
        # The test failed on its own: the soft checks that failed before are said too.
        checks = item.stash.get(keys.soft_checks_key, None)
        note = None if checks is None else checks.failed_too()
        if note is not None and hasattr(exc, "add_note"):
            exc.add_note(note)
        raise
    checks = item.stash.get(keys.soft_checks_key, None)  # the eval_checks fixture's, if used
    if checks is not None:
        checks.assert_all()
    return result


@hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Attach the run's verdicts and answer as pytest-html extras (when pytest-html is active).
    An item whose run was made ahead of its setup reports the run's own time as its setup's
    (``--durations``, JUnit): the time went to it, not to the item whose setup it overlapped.
    An eval item's reports also list the runs its process has going ahead (the progress line
    counts them in flight)."""
    report = yield
    eval_item = eval_item_class()
    runs_ahead = item.config.stash.get(keys.runs_ahead_key, None)
    if runs_ahead is not None and eval_item is not None and isinstance(item, eval_item):
        from pytest_plugin_evals.engine.run_ahead import AHEAD_ATTRIBUTE

        setattr(report, AHEAD_ATTRIBUTE, runs_ahead())
    if report.when == "setup" and item.stash.get(keys.made_ahead_key, False):
        outcome = item.stash.get(keys.outcome_key, None)
        if outcome is not None:
            report.duration = max(report.duration, outcome.result.duration_seconds)
    if report.when != "call":
        return report
    if (
        eval_item is not None
        and isinstance(item, eval_item)
        and item.config.pluginmanager.hasplugin("html")
    ):
        from pytest_plugin_evals.plugin.html_extras import extras_for
        from pytest_plugin_evals.records import RunRecord

        record = record_of(report)
        if isinstance(record, RunRecord):
            report.extras = [*getattr(report, "extras", []), *extras_for(record)]
    return report
