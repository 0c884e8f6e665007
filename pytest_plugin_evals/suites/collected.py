"""What a suite's entries become in a session, before the pytest shell makes items of them: a
case's arms and plugin under test (the arms from :mod:`.arms`) or the one error it is shown as;
a suite file's broken entries and a broken mock file, named (the mock file once); the runs a
command-line pick keeps."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, LoadError, PluginInfo
from pytest_plugin_evals.suites.arms import ArmPlan, NoArms, plan_arms
from pytest_plugin_evals.suites.manifest import case_plugins


@dataclass(frozen=True)
class Shown:
    """An entry that cannot run: its load error, shown as one item called ``name``."""

    name: str
    error: LoadError


def named_entries(entries: Iterable[Case | LoadError]) -> Iterator[Case | Shown]:
    """A suite file's entries, a broken one named by its line (``line-7``, then ``line-7-2``;
    ``case`` where the line is unknown)."""
    seen: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, Case):
            yield entry
            continue
        name = f"line-{entry.line}" if entry.line else "case"
        seen[name] = seen.get(name, 0) + 1
        yield Shown(name if seen[name] == 1 else f"{name}-{seen[name]}", entry)


def case_plan(
    case: Case, refused: set[str], **options: Any
) -> tuple[ArmPlan, PluginInfo | None] | Shown | None:
    """The case's arms (:func:`.arms.plan_arms` under ``options``) and its plugin under test, or
    the one error the case is shown as; None for an ``--eval-aa`` refusal said already
    (``refused``: the keys of those said, a trigger file's once for all its queries)."""
    try:
        plugins = case_plugins(case)
    except LoadError as error:
        return Shown(case.name, error)
    plugin = plugins[0] if plugins else None
    plan = plan_arms(case, has_plugin=plugin is not None, **options)
    if not isinstance(plan, NoArms):
        return plan, plugin
    if plan.once is not None and plan.once in refused:
        return None
    refused.add(plan.once or "")
    return Shown(case.name, plan.error)


def mock_errors(errors: Iterable[LoadError], suite_root: Path, said: set[str]) -> Iterator[Shown]:
    """Broken mock files, each shown once in the session (``said``: those shown), named by its
    path in the suite; the cases still run."""
    for error in errors:
        key = str(error.path.resolve())
        if key in said:
            continue
        said.add(key)
        try:
            name = error.path.relative_to(suite_root).as_posix()
        except ValueError:
            name = error.path.name
        yield Shown(name, error)
