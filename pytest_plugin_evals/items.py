"""Collectors and items: an evals folder becomes one item per case × arm × run."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .mocks import MockPlan, load_plan
from .model import Arm, Case, LoadError
from .settings import EvalSettings
from .suites import load_suite_file
from .suites.directory import load_case
from .suites.discover import SKIP_DIRS, Source, walk
from .suites.manifest import PluginInfo, case_plugins
from .suites.package_json import load as load_package_json

#: The ``user_properties`` key every eval item reports under (one JSON string).
PROPERTY = "plugin_evals"

settings_key = pytest.StashKey[EvalSettings]()


class EvalFailure(Exception):
    """A with-arm (or single-arm) run that did not pass its scored graders."""


def _settings(node: pytest.Item | pytest.Collector) -> EvalSettings:
    return node.config.stash[settings_key]


class EvalsDir(pytest.Directory):
    """An evals folder, or a plain group folder inside one.

    Its case folders and suite files become eval collectors; everything else in it (a
    ``test_*.py``, a helper package) is collected as pytest would collect it anyway, so a
    project whose tests live in a folder named ``evals`` loses none of them. ``results/``,
    ``mocks/`` and dot-folders are never collected.
    """

    suite_root: Path | None = None
    sources: list[Source] | None = None

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        root = self.suite_root or self.path
        sources = self.sources if self.sources is not None else walk(self.path)
        direct: dict[str, Source] = {}
        groups: dict[str, list[Source]] = {}
        for source in sources:
            rel = source.path.relative_to(self.path)
            if len(rel.parts) == 1:
                direct[rel.parts[0]] = source
            else:
                groups.setdefault(rel.parts[0], []).append(source)
        try:
            with os.scandir(self.path) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            entries = []
        for entry in entries:
            name, path = entry.name, Path(entry.path)
            found = direct.get(name)
            if found is not None:
                kind = CaseDir if found.kind == "case_dir" else SuiteFile
                node = kind.from_parent(self, path=found.path)
                node.suite_root = root
                yield node
            elif name in groups:
                group = EvalsDir.from_parent(self, path=path)
                group.suite_root = root
                group.sources = groups[name]
                yield group
            elif not name.startswith(".") and name not in SKIP_DIRS:
                yield from self._ordinary(entry, path)

    def _ordinary(self, entry: os.DirEntry[str], path: Path) -> Iterable[pytest.Collector]:
        """What pytest's own ``Dir`` would collect from an entry that holds no eval case."""
        ihook, config = self.ihook, self.config
        is_dir = entry.is_dir()
        if not self.session.isinitpath(path, with_parents=is_dir) and ihook.pytest_ignore_collect(
            collection_path=path, config=config
        ):
            return
        if is_dir:
            col = ihook.pytest_collect_directory(path=path, parent=self)
            if col is not None:
                yield col
        elif entry.is_file():
            yield from ihook.pytest_collect_file(file_path=path, parent=self)


class CaseDir(pytest.Directory):
    """One directory-format case."""

    suite_root: Path

    def collect(self) -> Iterable[pytest.Item]:
        try:
            case = load_case(self.path, self.suite_root)
        except LoadError as error:
            yield LoadErrorItem.from_parent(
                self, name=self.path.name, error=error, suite_root=self.suite_root
            )
            return
        yield from case_items(self, case)


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
    """The items of one case: its arms × its runs, in the order they run."""
    settings = _settings(parent)
    try:
        plugins = case_plugins(case)
    except LoadError as error:
        yield LoadErrorItem.from_parent(
            parent, name=case.name, error=error, suite_root=case.suite_root
        )
        return
    plugin = plugins[0] if plugins else None
    two_arm = settings.ablation == "with-without" or (
        settings.ablation == "auto" and plugin is not None and not case.history_file
    )
    if two_arm and plugin is None:
        problem = LoadError(
            case.path,
            "--eval-ablation with-without needs a plugin, but no "
            ".claude-plugin/plugin.json was found at or above the evals folder "
            "and the case names no plugins:",
            case.line,
        )
        yield LoadErrorItem.from_parent(
            parent, name=case.name, error=problem, suite_root=case.suite_root
        )
        return
    mock_plan = None
    if settings.mocks != "off":
        try:
            mock_plan = load_plan(case, plugin.path if plugin else None)
        except LoadError as error:
            yield LoadErrorItem.from_parent(
                parent, name=case.name, error=error, suite_root=case.suite_root
            )
            return
        yield from _mock_errors(parent, mock_plan, case.suite_root)
    runs = settings.runs or case.runs
    arms: tuple[Arm, ...] = ("with", "without") if two_arm else ("single",)
    for tag in marker_tags(case.tags):
        parent.config.addinivalue_line("markers", f"{tag}: eval case tag")
    for arm in arms:
        for run in range(1, runs + 1):
            item = EvalItem.create(parent, case, arm, run, plugin, two_arm)
            item.mock_plan = mock_plan
            item.runs_per_case = runs
            yield item


#: Marker names with a meaning of their own: a case tag by one of these names (``skip`` ...)
#: stays a tag (``--eval-tag``) but is not made a marker, so it cannot skip or xfail the case.
RESERVED_MARKERS = frozenset(
    {"evals", "skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
)


#: A tag that ``-m`` can name and ``markers`` can register (``smoke``, ``needs-net``, ``v1.2``).
MARKER_NAME = re.compile(r"[^\W_][\w.+/-]*")


def marker_tags(tags: Iterable[str]) -> list[str]:
    """The case tags that become markers (``-m smoke``); any other tag (reserved, ``_private``,
    ``two words``, ``a(b)``) is still a tag for ``--eval-tag``."""
    return [t for t in tags if MARKER_NAME.fullmatch(t) and t not in RESERVED_MARKERS]


reported_key = pytest.StashKey[set[str]]()


def _mock_errors(
    parent: pytest.Collector, plan: MockPlan, suite_root: Path
) -> Iterator[pytest.Item]:
    """A broken mock file is one error, reported once in the session; the cases still run."""
    reported = parent.config.stash.setdefault(reported_key, set())
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


def _run_eval(eval_run: Any) -> None:
    """The test function of every eval item: the run was made in setup (``eval_run``)."""
    __tracebackhide__ = True
    outcome = eval_run
    if outcome.result.arm == "without":
        return  # a measurement: it does not fail on grades
    # A run that ended with an error (a timeout, a non-zero exit) is graded on what it
    # produced, as the document records it: the item passes when its scored graders do.
    if not outcome.result.passed:
        raise EvalFailure(failure_message(outcome.result))


def failure_message(result: Any) -> str:
    lines = [f"score {result.score:.2f} (run {result.run}, {result.arm} arm)"]
    if result.error:
        lines.append(f"run error: {result.error}")
    if result.aborted:
        aborted = result.aborted
        lines.append(f"aborted by mock {aborted['server']}/{aborted['tool']}: {aborted['reason']}")
    for verdict in result.verdicts:
        if verdict.passed is False:
            note = "" if verdict.scored else " [with-only, not scored]"
            lines.append(f"✗ {verdict.name}{note}: {verdict.explanation}")
    for verdict in result.verdicts:
        if verdict.passed is None:
            lines.append(f"- {verdict.name}: {verdict.explanation}")
    return "\n".join(lines)


class EvalItem(pytest.Function):
    """One run of one case in one arm."""

    case: Case
    arm: Arm
    run: int
    plugin: PluginInfo | None
    two_arm: bool
    mock_plan: MockPlan | None = None
    runs_per_case: int | None = None

    @classmethod
    def create(
        cls,
        parent: pytest.Collector,
        case: Case,
        arm: Arm,
        run: int,
        plugin: PluginInfo | None,
        two_arm: bool,
    ) -> EvalItem:
        label = f"{arm}-{run}" if arm != "single" else f"{run}"
        item = cls.from_parent(parent, name=f"{case.name}[{label}]", callobj=_run_eval)
        item.case, item.arm, item.run, item.plugin, item.two_arm = case, arm, run, plugin, two_arm
        item.add_marker(pytest.mark.evals(case=case.name, arm=arm, run=run))
        for tag in marker_tags(case.tags):
            item.add_marker(tag)
        return item

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = (self.case.line - 1) if self.case.line else 0
        return self.case.path, line, f"eval {self.case.name} [{self.arm}] run {self.run}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, EvalFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def record_skip(self, reason: str) -> None:
        """Report a run that was never started (it is counted, not listed)."""
        self.record(
            {
                "arm": self.arm,
                "run": self.run,
                "skipped": reason,
                "score": 0.0,
                "passed": False,
                "graders": [],
                "costUsd": 0.0,
                "judgeCostUsd": 0.0,
            }
        )

    def record(self, result_dict: dict[str, Any]) -> None:
        doc = {
            "kind": "run",
            "nodeid": self.nodeid,
            "case": {**self.case.to_dict(), "runsPerCase": self.runs_per_case or self.case.runs},
            "arm": self.arm,
            "run": self.run,
            "twoArm": self.two_arm,
            "result": result_dict,
            "plugin": self.plugin.to_dict() if self.plugin else None,
        }
        self.user_properties[:] = [p for p in self.user_properties if p[0] != PROPERTY]
        self.user_properties.append((PROPERTY, json.dumps(doc, ensure_ascii=False)))


class LoadErrorItem(pytest.Item):
    """A case file that could not be loaded: an error with one line, while the rest runs."""

    def __init__(self, *, error: LoadError, suite_root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.suite_root = suite_root

    def setup(self) -> None:
        doc = {
            "kind": "load_error",
            "nodeid": self.nodeid,
            "path": str(self.error.path),
            "line": self.error.line,
            "message": self.error.message,
            "suiteRoot": str(self.suite_root),
        }
        self.user_properties.append((PROPERTY, json.dumps(doc, ensure_ascii=False)))
        pytest.fail(self.error.render(Path(self.config.rootpath)), pytrace=False)

    def runtest(self) -> None:  # pragma: no cover - setup always raises
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LoadError):
            return excinfo.value.render(Path(self.config.rootpath))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = (self.error.line - 1) if self.error.line else 0
        return self.error.path, line, f"could not load {self.error.path.name}"
