"""The pytest entry point (``pytest11: evals``): options, collection hooks, the controller session.

Only what these formats name is collected: folders named ``evals`` (and ``eval_paths``), and a
``package.json`` that has ``ai.evals``. A project without evals collects nothing extra.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from .items import CaseDir, EvalItem, EvalsDir, PackageJsonFile, settings_key
from .ledger import SpendLedger
from .options import add_options, read_settings
from .suites.discover import SKIP_DIRS, is_evals_dir, walk
from .suites.package_json import has_evals

pytest_plugins = ["pytest_plugin_evals.fixtures", "pytest_plugin_evals.testing.fixtures"]

session_key = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def _stamp() -> str:
    now = time.time()
    millis = int((now % 1) * 1000)
    return time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(now)) + f"-{millis:03d}Z"


def pytest_configure(config: pytest.Config) -> None:
    from .fixtures import ledger_key, stamp_key

    config.addinivalue_line(
        "markers",
        "evals(case, arm, run): an eval run; select with -m \"evals(arm='with')\"",
    )
    settings = read_settings(config)
    config.stash[settings_key] = settings
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        config.stash[stamp_key] = workerinput.get("eval_stamp") or _stamp()
        if workerinput.get("eval_ledger"):
            config.stash[ledger_key] = SpendLedger(Path(workerinput["eval_ledger"]))
        return
    config.stash[stamp_key] = _stamp()
    if settings.max_cost_usd is not None:
        handle, name = tempfile.mkstemp(prefix="plugin-evals-spent-", suffix=".txt")
        os.close(handle)
        config.stash[ledger_key] = SpendLedger(Path(name))
    from .session import EvalSession

    session = EvalSession(config, settings, config.stash[stamp_key])
    config.stash[session_key] = session
    config.pluginmanager.register(session, "plugin-evals-session")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "plugin-evals-xdist")
    if config.pluginmanager.hasplugin("html"):
        from .html_extras import HtmlColumns

        config.pluginmanager.register(HtmlColumns(), "plugin-evals-html")


def pytest_unconfigure(config: pytest.Config) -> None:
    from .fixtures import ledger_key

    session = config.stash.get(session_key, None)
    if session is not None:
        config.pluginmanager.unregister(session)
        del config.stash[session_key]
        ledger = config.stash.get(ledger_key, None)
        if ledger is not None:
            ledger.path.unlink(missing_ok=True)


class _XdistHooks:
    """Share the session's timestamp with the workers, so all runs land in one folder."""

    def pytest_configure_node(self, node: Any) -> None:
        from .fixtures import ledger_key, stamp_key

        node.workerinput["eval_stamp"] = node.config.stash[stamp_key]
        ledger = node.config.stash.get(ledger_key, None)
        if ledger is not None:
            node.workerinput["eval_ledger"] = str(ledger.path)


def _configured(path: Path, config: pytest.Config) -> bool:
    return path.resolve() in config.stash[settings_key].eval_paths


def _enclosing_evals(path: Path) -> Path | None:
    """The evals folder that holds ``path`` (not through ``results/`` or ``mocks/``), if any."""
    if path.name in SKIP_DIRS:
        return None
    for folder in path.parents:
        if is_evals_dir(folder):
            return folder
        if folder.name in SKIP_DIRS:
            return None
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if isinstance(parent, EvalsDir):
        return None  # a folder without eval cases inside an evals folder: pytest's own
    root = path
    if not (is_evals_dir(path) or _configured(path, parent.config)):
        # The top of the collection tree may be inside an evals folder (no ini file, and
        # ``pytest evals/group`` or ``cd evals/case && pytest``): its cases still belong to it.
        enclosing = _enclosing_evals(path) if isinstance(parent, pytest.Session) else None
        if enclosing is None:
            return None
        root = enclosing
    sources = walk(path)
    if not sources:
        return None  # a folder named evals that holds no eval case (a test package, say)
    if root != path and [s.path for s in sources] == [path]:
        case = CaseDir.from_parent(parent, path=path)
        case.suite_root = root
        return case
    node = EvalsDir.from_parent(parent, path=path)
    node.suite_root = root
    node.sources = sources
    return node


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == "package.json" and has_evals(file_path):
        return PackageJsonFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    settings = config.stash[settings_key]
    if settings.case_glob is None and not settings.tags:
        return
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if isinstance(item, EvalItem) and not settings.selects(item.case.name, item.case.tags):
            dropped.append(item)
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Soft checks (the ``eval_checks`` fixture) fail the test once, at its end."""
    __tracebackhide__ = True  # the failure is the list of checks, not this hook
    from .fixtures import soft_checks_key

    try:
        result = yield
    except BaseException as exc:
        # The test failed on its own: the soft checks that failed before are said too.
        checks = item.stash.get(soft_checks_key, None)
        if checks is not None and checks.failures and hasattr(exc, "add_note"):
            listed = "\n".join(f"{v.name}: {v.explanation}" for v in checks.failures)
            exc.add_note(f"and {len(checks.failures)} soft check(s) failed:\n{listed}")
        raise
    checks = item.stash.get(soft_checks_key, None)
    if checks is not None and checks.failures:
        checks.assert_all()
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Attach the run's verdicts and answer as pytest-html extras (when pytest-html is active)."""
    report = yield
    if (
        isinstance(item, EvalItem)
        and report.when == "call"
        and item.config.pluginmanager.hasplugin("html")
    ):
        from .html_extras import extras_for
        from .items import PROPERTY

        for name, value in item.user_properties:
            if name == PROPERTY:
                import json

                record = json.loads(str(value))
                report.extras = [*getattr(report, "extras", []), *extras_for(record)]
    return report
