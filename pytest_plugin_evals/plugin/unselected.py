"""The cases a session collected but did not select (``-k``, ``-m``, ``--eval-case``,
``--eval-tag``, ``--eval-shard``): every run item of the case was deselected.

The document lists them (``suite.notSelected``), so a later ``--eval-compare last`` knows
this session was a subset, and a comparison says ``not run`` for them rather than ``gone``.
Under pytest-xdist the workers deselect: each writes the list to the session's shared folder
once its collection is done, and the controller reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_plugin_evals.plugin.keys import deselected_key, shared_key, unselected_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.recording import tell_unselected, unselected
from pytest_plugin_evals.reporting.result import relative


def _key(item: Any) -> tuple[str, str]:
    case = item.case
    return case.name, relative(str(case.dir), str(case.suite_root))


def note_deselected(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """``pytest_deselected``: remember the deselected eval items' cases."""
    found = config.stash.setdefault(deselected_key, set())
    found.update(_key(item) for item in eval_items(items))


def settle(session: pytest.Session) -> None:
    """``pytest_collection_finish``: the cases none of whose items is selected."""
    config = session.config
    deselected = config.stash.get(deselected_key, set())
    if not deselected:
        return
    selected = {_key(item) for item in eval_items(session.items)}
    found = tuple(sorted(deselected - selected))
    config.stash[unselected_key] = found
    if hasattr(config, "workerinput") and found:
        tell_unselected(config.stash[shared_key], found)


def not_selected(config: pytest.Config) -> tuple[tuple[str, str], ...]:
    """The cases this session did not select (on the controller, a worker's list)."""
    found = config.stash.get(unselected_key, None)
    if found is not None:
        return found
    shared = config.stash.get(shared_key, None)
    return () if shared is None else unselected(shared)
