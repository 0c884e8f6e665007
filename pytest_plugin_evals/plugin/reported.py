"""The record an eval item put on its test report (read once per record)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_plugin_evals.plugin.keys import RECORD_PROPERTY

if TYPE_CHECKING:
    from pytest_plugin_evals.records import Record

# The records are imported where used, on purpose: this module is loaded in every session.


def record_of(report: pytest.TestReport) -> Record | None:
    """The record an eval item put on its report, if any."""
    for name, value in report.user_properties:
        if name == RECORD_PROPERTY:
            from pytest_plugin_evals.records import RecordError, decode

            try:
                return decode(str(value))
            except RecordError as exc:
                raise pytest.UsageError(f"{report.nodeid}: {exc}") from None
    return None
