"""Whether eval items were made, asked one way everywhere, and the record an eval item put on
its test report.

The items module is imported with the collectors: when it is not loaded, no eval item was made,
and a project whose tests are not evals does not pay for importing it to find out.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pytest_plugin_evals.plugin.options import usage_error

if TYPE_CHECKING:
    import pytest

    from pytest_plugin_evals.plugin.items import EvalItem
    from pytest_plugin_evals.records import Record


def eval_item_class() -> type[EvalItem] | None:
    """The eval item class, or None when no eval item was made."""
    module = sys.modules.get("pytest_plugin_evals.plugin.items")
    found: type[EvalItem] | None = None if module is None else module.EvalItem
    return found


def eval_items(items: Iterable[pytest.Item]) -> list[EvalItem]:
    """The eval items among ``items`` (none when no eval item was made)."""
    cls = eval_item_class()
    return [] if cls is None else [item for item in items if isinstance(item, cls)]


def record_of(report: pytest.TestReport) -> Record | None:
    """The record an eval item put on its report, if any."""
    from pytest_plugin_evals.records import RecordError, record_in

    try:
        return record_in(report.user_properties)
    except RecordError as exc:
        usage_error(f"{report.nodeid}: {exc}")
