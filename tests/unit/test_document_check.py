"""The result document's shape (pydantic models): one message naming the field's JSON path."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.reporting.document_check import DocumentError, check_document


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"costUsd": True}, "expected a number or null, found true (at $.costUsd)"),
        (
            {"cases": [{"arms": {"with": [{"score": 1.5}]}}]},
            "expected a number from 0 to 1 or null, found 1.5 (at $.cases[0].arms.with[0].score)",
        ),
        (
            {"cases": [{"arms": {"with": [{"score": "1"}]}}]},
            "expected a number from 0 to 1 or null, found a string "
            "(at $.cases[0].arms.with[0].score)",
        ),
        ({"cases": [{"tags": 3}]}, "expected a list or null, found 3 (at $.cases[0].tags)"),
        ({"errors": {"judge": None}}, "expected a number, found null (at $.errors.judge)"),
        (
            {"agents": [{"errors": {"judge": "2"}}]},
            "expected a number or null, found a string (at $.agents[0].errors.judge)",
        ),
        (
            {"suite": {"plugins": [{"name": "p"}]}},
            "the field 'path' is missing (at $.suite.plugins[0])",
        ),
        (
            {"suite": {"plugins": [{"path": None}]}},
            "expected a string, found null (at $.suite.plugins[0].path)",
        ),
        ({"aggregates": []}, "expected an object or null, found a list (at $.aggregates)"),
    ],
)
def test_a_wrong_field_is_one_line_with_its_path(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(DocumentError) as info:
        check_document({"schemaVersion": 1, **doc}, 1)
    assert str(info.value) == message


def test_unknown_fields_and_nulls_read_as_not_known() -> None:
    check_document(
        {"schemaVersion": 1, "future": {"x": 1}, "cases": [None, {"arms": {"with": [None]}}]}, 1
    )
