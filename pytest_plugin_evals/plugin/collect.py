"""Collectors: an evals folder becomes one item per case × arm × run.

Imported only once an evals folder (or a package.json with ``ai.evals``) is found: the suite
loaders, the YAML parser and the mock plans load here, never for a project without evals.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

from pytest_plugin_evals.engine.nodeids import marker_tags
from pytest_plugin_evals.mocks.discover import MockPlan, load_plan
from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.plugin.items import EvalItem, LoadErrorItem
from pytest_plugin_evals.plugin.keys import case_picks_key, reported_mocks_key, settings_key
from pytest_plugin_evals.suites.arms import NoArms, plan_arms
from pytest_plugin_evals.suites.directory import load_case
from pytest_plugin_evals.suites.discover import SKIP_DIRS, Source, walk
from pytest_plugin_evals.suites.manifest import case_plugins
from pytest_plugin_evals.suites.package_json import load as load_package_json
from pytest_plugin_evals.suites.suite_file import load_suite_file

if TYPE_CHECKING:
    from pytest_plugin_evals.settings import EvalSettings
    from pytest_plugin_evals.suites.arms import ArmPlan

#: config: the case folders and suite files of each evals folder collected, by path.
_trees_key = pytest.StashKey[dict[Path, dict[Path, Source]]]()


def _tree(config: pytest.Config, path: Path) -> tuple[Path, dict[Path, Source]] | None:
    """The evals folder whose tree holds ``path`` (read before), and its sources."""
    text = str(path)
    for root, sources in config.stash.get(_trees_key, {}).items():
        top = str(root)
        if text == top or text.startswith(top + os.sep):
            return root, sources
    return None


def read_tree(config: pytest.Config, root: Path) -> None:
    """Read the case folders and suite files of the evals folder ``root`` (once)."""
    trees = config.stash.setdefault(_trees_key, {})
    if root not in trees:
        trees[root] = {source.path: source for source in walk(root)}


def eval_node(
    path: Path, parent: pytest.Collector, kind: Literal["case_dir", "suite_file"]
) -> CaseDir | SuiteFile | None:
    """``pytest_collect_directory`` (``kind`` ``case_dir``) or ``pytest_collect_file``
    (``suite_file``) in an evals folder's tree: its case folders and suite files become eval
    collectors. Everything else there, the evals folder and a group of cases included, is
    pytest's own ``Dir`` (or ``Package``), which collects its entries through these hooks:
    ``--ignore``, ``norecursedirs``, conftests and a folder of tests hold in it as anywhere."""
    found = _tree(parent.config, path)
    source = found[1].get(path) if found is not None else None
    if found is None or source is None or source.kind != kind:
        return None
    node = (CaseDir if kind == "case_dir" else SuiteFile).from_parent(parent, path=path)
    node.suite_root = found[0]
    return node


#: pytest's default ``norecursedirs``.
PYTEST_NORECURSEDIRS = [
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
]


def kept_case(path: Path, config: pytest.Config) -> bool:
    """Whether ``path`` is a case folder that pytest's default ``norecursedirs`` passes over
    for its name alone (``build``, ``dist``, ``venv``…): a case never vanishes for its name, as
    the reference runs it. ``--ignore``, ``--ignore-glob`` and the project's own
    ``norecursedirs`` still hold."""
    if list(config.getini("norecursedirs")) != PYTEST_NORECURSEDIRS:
        return False  # the project chose its own: it holds for cases too
    if not any(fnmatch.fnmatch(path.name, pattern) for pattern in PYTEST_NORECURSEDIRS):
        return False  # passed over for another reason (a conftest's collect_ignore)
    found = _tree(config, path)
    source = found[1].get(path) if found is not None else None
    if source is None or source.kind != "case_dir":
        return False
    here = config.invocation_params.dir
    if any(
        path == Path(os.path.abspath(here / given)) for given in config.getoption("ignore") or ()
    ):
        return False
    globs = config.getoption("ignore_glob") or ()
    return not any(fnmatch.fnmatch(str(path), os.path.abspath(here / g)) for g in globs)


def never_collected(path: Path, config: pytest.Config) -> bool:
    """Whether ``path`` is in an evals folder's ``results/`` or ``mocks/`` (kept runs, mock
    files and their programs: never the project's tests)."""
    if SKIP_DIRS.isdisjoint(path.parts):
        return False
    found = _tree(config, path)
    if found is None:
        return False
    return any(part in SKIP_DIRS for part in path.relative_to(found[0]).parts)


class CaseDir(pytest.Directory):
    """One directory-format case.

    Its items' node ids are ``<folder>::<case>[<label>]``. Given back on the command line, such
    an id (or a file of the case) is collected as the folder, and the runs it names are kept
    here (see ``case_picks_key``): pytest itself refuses ``::`` after a folder.
    """

    suite_root: Path

    def collect(self) -> Iterable[pytest.Item]:
        try:
            case = load_case(self.path, self.suite_root)
        except LoadError as error:
            items: list[pytest.Item] = [
                LoadErrorItem.from_parent(
                    self, name=self.path.name, error=error, suite_root=self.suite_root
                )
            ]
        else:
            items = list(case_items(self, case))
        picks = self.config.stash.get(case_picks_key, {}).get(self.path)
        if picks is None:
            return items
        names = [item.name for item in items if isinstance(item, EvalItem)]
        for pick in picks:
            pick.seen, pick.runs = True, names
        kept: list[pytest.Item] = []
        for item in items:
            if isinstance(item, EvalItem):
                chosen = [p for p in picks if p.selects(item.name, item.case.name)]
            else:  # a case that does not load (or a broken mock file), whatever run is named
                chosen = picks
            for pick in chosen:
                pick.found = True
            if chosen:
                kept.append(item)
        return kept


class SuiteFile(pytest.File):
    """A suite file holding many cases (evals.json, sy YAML/JSON)."""

    suite_root: Path

    def collect(self) -> Iterable[pytest.Item]:
        try:
            entries = load_suite_file(self.path, self.suite_root)
        except LoadError as error:
            yield LoadErrorItem.from_parent(
                self, name=self.path.name, error=error, suite_root=self.suite_root
            )
            return
        yield from _entries_items(self, entries, self.suite_root)


class PackageJsonFile(pytest.File):
    """``ai.evals`` in a package.json."""

    def collect(self) -> Iterable[pytest.Item]:
        try:
            entries = load_package_json(self.path)
        except LoadError as error:
            yield LoadErrorItem.from_parent(
                self, name="ai.evals", error=error, suite_root=self.path.parent
            )
            return
        yield from _entries_items(self, entries, self.path.parent)


def _entries_items(
    parent: pytest.Collector, entries: Iterable[Case | LoadError], suite_root: Path
) -> Iterator[pytest.Item]:
    seen: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, LoadError):
            name = f"line-{entry.line}" if entry.line else "case"
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name}-{seen[name]}"
            yield LoadErrorItem.from_parent(parent, name=name, error=entry, suite_root=suite_root)
        else:
            yield from case_items(parent, entry)


def case_items(parent: pytest.Collector, case: Case) -> Iterator[pytest.Item]:
    """The items of one case: its agents (``--eval-agents``) × arms × runs, in the order they
    run (the arms decided by ``suites.arms.plan_arms``)."""
    settings = parent.config.stash[settings_key]
    try:
        plugins = case_plugins(case)
    except LoadError as error:
        yield _error_item(parent, case, error)
        return
    plugin = plugins[0] if plugins else None
    plan = _arm_plan(case, settings, has_plugin=plugin is not None)
    if isinstance(plan, NoArms):
        reported = parent.config.stash.setdefault(_not_aa_key, set())
        if plan.once is None or plan.once not in reported:  # an A/A refusal: once each
            reported.add(plan.once or "")
            yield _error_item(parent, case, plan.error)
        return
    # --eval-baseline-plugin: the second arm loads it (an A/B); --eval-aa: the plugin itself
    baseline = plugin if settings.aa else None
    if plan.two_arm and plugin is not None and settings.baseline_plugin is not None:
        from pytest_plugin_evals.plugin.baseline import baseline_for

        baseline = baseline_for(parent.config, plugin)
        if baseline is None:
            return  # the session's one usage error, once collection is over
    mock_plan = None
    if settings.mocks != "off":
        try:
            mock_plan = load_plan(case, plugin.path if plugin else None)
        except LoadError as error:
            yield _error_item(parent, case, error)
            return
        yield from _mock_errors(parent, mock_plan, case.suite_root)
    for tag in marker_tags(case.tags):
        parent.config.addinivalue_line("markers", f"{tag}: eval case tag")
    # Under --eval-agents every case runs on each agent, one agent's items after another's.
    labels: tuple[str | None, ...] = tuple(label for label, _ in settings.agents) or (None,)
    for agent in labels:
        for arm in plan.arms(baseline=baseline is not None):
            for run in range(1, plan.runs + 1):
                item = EvalItem.create(parent, case, arm, run, plugin, plan.two_arm, agent)
                item.mock_plan = mock_plan
                item.baseline = baseline
                item.runs_per_case = plan.runs
                yield item


def _arm_plan(case: Case, settings: EvalSettings, *, has_plugin: bool) -> ArmPlan | NoArms:
    """The case's arms under the session's settings (``suites.arms.plan_arms``)."""
    return plan_arms(
        case,
        has_plugin=has_plugin,
        ablation=settings.ablation,
        aa=settings.aa,
        ab=settings.baseline_plugin is not None,
        runs=settings.runs,
        runs_auto=settings.runs_auto,
    )


#: config: the cases (a trigger file once) already reported as not able to run an A/A.
_not_aa_key: pytest.StashKey[set[str]] = pytest.StashKey()


def _error_item(parent: pytest.Collector, case: Case, error: LoadError) -> pytest.Item:
    """The case's one item when it cannot run: its load error."""
    return LoadErrorItem.from_parent(
        parent, name=case.name, error=error, suite_root=case.suite_root
    )


def _mock_errors(
    parent: pytest.Collector, plan: MockPlan, suite_root: Path
) -> Iterator[pytest.Item]:
    """A broken mock file is one error, reported once in the session; the cases still run."""
    reported = parent.config.stash.setdefault(reported_mocks_key, set())
    for error in plan.errors:
        key = str(error.path.resolve())
        if key in reported:
            continue
        reported.add(key)
        try:
            name = error.path.relative_to(suite_root).as_posix()
        except ValueError:
            name = error.path.name
        yield LoadErrorItem.from_parent(parent, name=name, error=error, suite_root=suite_root)
