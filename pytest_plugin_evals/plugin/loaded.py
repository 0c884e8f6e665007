"""Whether eval items were made, asked one way everywhere.

The items module is imported with the collectors: when it is not loaded, no eval item was made,
and a project whose tests are not evals does not pay for importing it to find out.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

    from pytest_plugin_evals.plugin.items import EvalItem

ITEMS_MODULE = "pytest_plugin_evals.plugin.items"


def eval_item_class() -> type[EvalItem] | None:
    """The eval item class, or None when no eval item was made."""
    module = sys.modules.get(ITEMS_MODULE)
    found: type[EvalItem] | None = None if module is None else module.EvalItem
    return found


def eval_items(items: Iterable[pytest.Item]) -> list[EvalItem]:
    """The eval items among ``items`` (none when no eval item was made)."""
    cls = eval_item_class()
    return [] if cls is None else [item for item in items if isinstance(item, cls)]
