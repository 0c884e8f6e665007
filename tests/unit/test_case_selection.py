"""Which cases ``--eval-case`` and ``--eval-tag`` select, and which tags become markers for
``-m``, called directly (``EvalSettings.selects``, ``engine.nodeids.marker_tags``, the
options' parser); the sessions they drive: tests/integration/test_collection.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.engine.nodeids import marker_tags
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.options import OPTIONS, settings_from
from pytest_plugin_evals.settings.parsers import Given

#: The cases of tests/integration/test_collection.py's suite, and their tags.
CASES = {
    "nested-case": (),
    "other": ("_private", "skip", "c", "a(b)"),
    "suggests-version": ("smoke", "a"),
    "summarise": ("b", "needs-net"),
}


def selected(settings: EvalSettings) -> list[str]:
    return [name for name, tags in CASES.items() if settings.selects(name, tags)]


@pytest.mark.parametrize(
    ("glob", "tags", "expected"),
    [
        (None, (), list(CASES)),
        ("su*", (), ["suggests-version", "summarise"]),
        ("sug*", (), ["suggests-version"]),
        ("?ested-case", (), ["nested-case"]),
        ("group/*", (), []),  # the glob is on the case's name, not its folder
        ("Su*", (), []),  # case-sensitive
        ("sug", (), []),  # anchored
        (None, ("a", "b"), ["suggests-version", "summarise"]),  # any of the tags
        (None, ("a", "c"), ["other", "suggests-version"]),
        (None, ("skip",), ["other"]),  # a tag pytest reserves is still a tag
        (None, ("a(b)",), ["other"]),
        ("sug*", ("b",), []),  # the glob AND the tags
        ("su*", ("b",), ["summarise"]),
    ],
)
def test_the_case_glob_and_any_of_the_tags_select(
    glob: str | None, tags: tuple[str, ...], expected: list[str]
) -> None:
    assert selected(EvalSettings(case_glob=glob, tags=tags)) == expected


def test_each_eval_tag_is_split_on_commas(tmp_path: Path) -> None:
    """``--eval-tag a --eval-tag b,c`` (pytest hands the option's values as a list)."""
    (option,) = [o for o in OPTIONS if o.flag == "--eval-tag"]
    given = Given(["a", "b, c", ","], "--eval-tag", True, tmp_path, tmp_path)
    assert settings_from({option.key: given}).tags == ("a", "b", "c")


def test_tags_that_name_a_marker_become_markers_the_others_stay_tags() -> None:
    """``-m`` reaches the tags a marker can be named by; a reserved one (``skip``), a private
    one or one with parentheses would break or change collection as a marker."""
    assert marker_tags(["smoke", "needs-net", "v1.2", "c"]) == ["smoke", "needs-net", "v1.2", "c"]
    assert marker_tags(["_private", "skip", "a(b)", "two words", "xfail", "parametrize"]) == []
