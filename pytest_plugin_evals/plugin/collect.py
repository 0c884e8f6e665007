"""Collectors: an evals folder becomes one item per case × arm × run.

Imported only once an evals folder (or a package.json with ``ai.evals``) is found: the suite
loaders, the YAML parser and the mock plans load here, never for a project without evals. The
decisions are the core's (the evals folders' trees: ``suites.discover.Trees``; a case's arms
and the errors shown: ``suites.collected``; a run's name: ``engine.nodeids``); here they become
pytest's collectors and items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import compress, product
from pathlib import Path
from typing import Literal

import pytest

from pytest_plugin_evals.engine.nodeids import marker_tags
from pytest_plugin_evals.mocks.discover import load_plan
from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.plugin.items import EvalItem, LoadErrorItem
from pytest_plugin_evals.plugin.keys import case_picks_key, reported_mocks_key, settings_key
from pytest_plugin_evals.suites.collected import Shown, case_plan, mock_errors, named_entries
from pytest_plugin_evals.suites.directory import load_case
from pytest_plugin_evals.suites.discover import Trees
from pytest_plugin_evals.suites.package_json import load as load_package_json
from pytest_plugin_evals.suites.picks import picked
from pytest_plugin_evals.suites.suite_file import load_suite_file

#: config: the case folders and suite files of each evals folder collected.
_trees_key = pytest.StashKey[Trees]()
#: config: the cases (a trigger file once) already shown as not able to run an A/A.
_not_aa_key: pytest.StashKey[set[str]] = pytest.StashKey()


def trees(config: pytest.Config) -> Trees:
    """The trees of the evals folders this process collects (each read once)."""
    return config.stash.setdefault(_trees_key, Trees())


def eval_node(
    path: Path, parent: pytest.Collector, kind: Literal["case_dir", "suite_file"]
) -> CaseDir | SuiteFile | None:
    """``pytest_collect_directory`` (``kind`` ``case_dir``) or ``pytest_collect_file``
    (``suite_file``) in an evals folder's tree: its case folders and suite files become eval
    collectors. Everything else there, the evals folder and a group of cases included, is
    pytest's own ``Dir`` (or ``Package``), which collects its entries through these hooks:
    ``--ignore``, ``norecursedirs``, conftests and a folder of tests hold in it as anywhere."""
    found = trees(parent.config).find(path)
    if found is None or found[1] is None or found[1].kind != kind:
        return None
    node = (CaseDir if kind == "case_dir" else SuiteFile).from_parent(parent, path=path)
    node.suite_root = found[0]
    return node


def kept_case(path: Path, config: pytest.Config) -> bool:
    """Whether ``path`` is a case folder kept though pytest's default ``norecursedirs`` passes
    over its name (``suites.discover.Trees.kept_case``)."""
    here = config.invocation_params.dir
    return trees(config).kept_case(
        path,
        list(config.getini("norecursedirs")),
        [here / given for given in config.getoption("ignore") or ()],
        [str(here / glob) for glob in config.getoption("ignore_glob") or ()],
    )


class CaseDir(pytest.Directory):
    """One directory-format case.

    Its items' node ids are ``<folder>::<case>[<label>]``. Given back on the command line, such
    an id (or a file of the case) is collected as the folder, and the runs it names are kept
    here (see ``case_picks_key``): pytest itself refuses ``::`` after a folder.
    """

    suite_root: Path

    def collect(self) -> Iterable[pytest.Item]:
        items = list(_file_items(self, lambda: [load_case(self.path, self.suite_root)]))
        picks = self.config.stash.get(case_picks_key, {}).get(self.path)
        if picks is None:
            return items
        runs = [(i.name, i.case.name) if isinstance(i, EvalItem) else None for i in items]
        return list(compress(items, picked(picks, runs)))


class SuiteFile(pytest.File):
    """A suite file holding many cases (evals.json, sy YAML/JSON)."""

    suite_root: Path

    def collect(self) -> Iterable[pytest.Item]:
        return _file_items(self, lambda: load_suite_file(self.path, self.suite_root))


class PackageJsonFile(pytest.File):
    """``ai.evals`` in a package.json."""

    @property
    def suite_root(self) -> Path:
        return self.path.parent

    def collect(self) -> Iterable[pytest.Item]:
        return _file_items(self, lambda: load_package_json(self.path), "ai.evals")


def _file_items(
    parent: CaseDir | SuiteFile | PackageJsonFile,
    load: Callable[[], Iterable[Case | LoadError]],
    whole: str | None = None,
) -> Iterator[pytest.Item]:
    """The items of a case folder or suite file; one error item (called ``whole``, else the
    file's name) when it does not load at all."""
    try:
        entries: Iterable[Case | Shown] = list(named_entries(load()))
    except LoadError as error:
        entries = [Shown(whole or parent.path.name, error)]
    yield from _items(parent, entries, parent.suite_root)


def _items(
    parent: pytest.Collector, entries: Iterable[Case | Shown], suite_root: Path
) -> Iterator[pytest.Item]:
    for entry in entries:
        if isinstance(entry, Shown):
            yield LoadErrorItem.from_parent(
                parent, name=entry.name, error=entry.error, suite_root=suite_root
            )
        else:
            yield from _case_items(parent, entry)


def _case_items(parent: pytest.Collector, case: Case) -> Iterator[pytest.Item]:
    """The items of one case: its agents (``--eval-agents``) × arms × runs, in the order they
    run (one agent's after another's), or the one error it is shown as."""
    config, settings = parent.config, parent.config.stash[settings_key]
    ab = settings.baseline_plugin is not None
    planned = case_plan(
        case,
        config.stash.setdefault(_not_aa_key, set()),
        ablation=settings.ablation,
        aa=settings.aa,
        ab=ab,
        runs=settings.runs,
        runs_auto=settings.runs_auto,
    )
    if not isinstance(planned, tuple):
        yield from _items(parent, [planned] if planned else [], case.suite_root)
        return
    plan, plugin = planned
    # --eval-baseline-plugin: the second arm loads it (an A/B); --eval-aa: the plugin itself
    baseline = plugin if settings.aa else None
    if plan.two_arm and plugin is not None and ab:
        from pytest_plugin_evals.plugin.baseline import baseline_for

        baseline = baseline_for(config, plugin)
        if baseline is None:
            return  # the session's one usage error, once collection is over
    mock_plan = None
    if settings.mocks != "off":
        try:
            mock_plan = load_plan(case, plugin.path if plugin else None)
        except LoadError as error:
            yield from _items(parent, [Shown(case.name, error)], case.suite_root)
            return
        said = config.stash.setdefault(reported_mocks_key, set())
        yield from _items(
            parent, mock_errors(mock_plan.errors, case.suite_root, said), case.suite_root
        )
    for tag in marker_tags(case.tags):
        config.addinivalue_line("markers", f"{tag}: eval case tag")
    labels = tuple(label for label, _ in settings.agents) or (None,)
    arms = plan.arms(baseline=baseline is not None)
    for agent, arm, run in product(labels, arms, range(1, plan.runs + 1)):
        item = EvalItem.create(parent, case, arm, run, plugin, plan.two_arm, agent)
        item.mock_plan, item.baseline, item.runs_per_case = mock_plan, baseline, plan.runs
        yield item
