"""``expect:`` guards: every kind, the reference's wording, and bad guards refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.mocks.guards import GuardError, check, compile_expect

CALL = {
    "title": "Crash bug",
    "priority": "urgent",
    "id": 7,
    "draft": True,
    "tags": ["a"],
    "meta": {"owner": "alice", "team": {"name": "core"}},
    "kind": "CRASH",
    "version": 2.0,
}


def violation(expect: dict[str, Any], call: dict[str, Any] = CALL) -> str | None:
    return check(compile_expect(expect), call)


def test_the_reference_message_for_a_list() -> None:
    assert (
        violation({"priority": ["low", "medium", "high"]})
        == 'priority = "urgent" is not one of [low, medium, high]'
    )


def test_observed_passing_guards_pass() -> None:
    # The combination the reference was seen to accept.
    expect = {
        "id": "number",
        "draft": "bool",
        "tags": "array",
        "meta": "object",
        "meta.owner": ["alice", "bob"],
        "title": "/^[A-Z][a-z]+ bug$/",
        "kind": "/^crash$/i",
    }
    assert violation(expect) is None


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ({"title": "number"}, 'title = "Crash bug" is not a number'),
        ({"id": "string"}, "id = 7 is not a string"),
        ({"title": "bool"}, 'title = "Crash bug" is not a bool'),
        ({"id": "boolean"}, "id = 7 is not a bool"),
        ({"tags": "object"}, 'tags = ["a"] is not an object'),
        ({"meta": "array"}, 'meta = {"owner":"alice","team":{"name":"core"}} is not an array'),
        ({"draft": "number"}, "draft = true is not a number"),
    ],
)
def test_type_guards(expect: dict[str, Any], message: str) -> None:
    assert violation(expect) == message


def test_lists_compare_as_javascript_strings() -> None:
    assert violation({"id": [7, 8]}) is None
    assert violation({"id": ["7"]}) is None
    assert violation({"draft": ["true"]}) is None
    assert violation({"version": [2]}) is None  # String(2.0) == "2"
    assert violation({"id": [1, 2]}) == "id = 7 is not one of [1, 2]"
    assert violation({"tags": ["a"]}) == 'tags = ["a"] is not one of [a]'


def test_nested_maps_are_dot_paths() -> None:
    assert violation({"meta": {"owner": ["alice"], "team": {"name": "string"}}}) is None
    assert (
        violation({"meta": {"team": {"name": ["infra"]}}})
        == 'meta.team.name = "core" is not one of [infra]'
    )
    assert violation({"title": {"x": "string"}}) == "title.x is missing (expected a string)"


def test_regex_guards() -> None:
    assert violation({"kind": "/^crash$/"}) == 'kind = "CRASH" does not match /^crash$/'
    assert violation({"kind": "/^crash$/i"}) is None
    assert violation({"id": "/^\\d+$/"}) is None  # a number is matched as String(value)
    assert violation({"meta": "/alice/"}) is not None  # objects never match
    assert violation({"title": "/(?<w>bug)$/"}) is None  # JavaScript syntax


def test_literals() -> None:
    assert violation({"title": "Crash bug", "id": 7, "draft": True}) is None
    assert violation({"id": "7"}) is None
    assert violation({"title": "Other"}) == 'title = "Crash bug" is not "Other"'
    assert violation({"draft": False}) == "draft = true is not false"


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ({"assignee": "string"}, "assignee is missing (expected a string)"),
        ({"assignee": ["a", "b"]}, "assignee is missing (expected one of [a, b])"),
        ({"assignee": "/x/"}, "assignee is missing (expected a match for /x/)"),
        ({"assignee": 3}, "assignee is missing (expected 3)"),
    ],
)
def test_missing_values_violate(expect: dict[str, Any], message: str) -> None:
    assert violation(expect) == message


def test_the_first_violation_is_reported() -> None:
    assert (
        violation({"title": "string", "id": "string", "kind": "number"}) == "id = 7 is not a string"
    )


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("string", "expect: must be a map of input paths to guards (got str 'string')"),
        ({"a": []}, "expect: a: an empty list allows no value"),
        ({"a": [{"x": 1}]}, "expect: a: a list of allowed values holds strings, numbers or bools"),
        ({"a": "/[/"}, "expect: a: Invalid regular expression"),
        ({"a": "/x/q"}, "expect: a: must be JS RegExp flags"),
        ({"a": {}}, "expect: a: an empty map guards nothing"),
    ],
)
def test_bad_guards_are_refused(expect: Any, message: str) -> None:
    with pytest.raises(GuardError) as info:
        compile_expect(expect)
    assert str(info.value).startswith(message)


def test_no_expect_means_no_guards() -> None:
    assert compile_expect(None) == ()
    assert check((), {"anything": 1}) is None


def test_guards_survive_a_round_trip_through_json() -> None:
    import json

    from pytest_plugin_evals.mocks.guards import Guard

    guards = compile_expect({"kind": "/^crash$/i", "priority": ["low"], "id": "number"})
    copied = tuple(Guard.from_dict(json.loads(json.dumps(g.to_dict()))) for g in guards)
    assert copied == guards
    assert check(copied, CALL) == 'priority = "urgent" is not one of [low]'


def test_yaml_dates_are_literal_text(tmp_path: Path) -> None:
    from pytest_plugin_evals.mocks.spec import parse_mock

    path = tmp_path / "m.md"
    path.write_text("---\nexpect:\n  due: 2024-01-31\n  week: [2024-01-01]\n---\nok", "utf-8")
    guards = parse_mock(path).guards
    assert check(guards, {"due": "2024-01-31", "week": "2024-01-01"}) is None
    assert (
        check(guards, {"due": "2024-02-01", "week": "x"})
        == 'due = "2024-02-01" is not "2024-01-31"'
    )
