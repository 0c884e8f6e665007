"""The bounded loader: alias bombs, deep nesting and large files are one-line errors, found in
time proportional to the text."""

from __future__ import annotations

import inspect
import sys
import time
from pathlib import Path

import pytest
import yaml

from pytest_plugin_evals.suites.json_lines import JSONProblem, load_json
from pytest_plugin_evals.testing.rules_file import RulesFileError, read_rules
from pytest_plugin_evals.util import safeload
from pytest_plugin_evals.util.frontmatter import YAMLProblem, load_yaml
from pytest_plugin_evals.util.safeload import OverBound


def bomb(levels: int) -> str:
    """A "billion laughs" of ``levels`` lines: 9**levels nodes once expanded."""
    lines = ["x0: &x0 [" + ", ".join(['"lol"'] * 9) + "]"]
    for n in range(1, levels):
        lines.append(f"x{n}: &x{n} [" + ", ".join([f"*x{n - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def nested_yaml(depth: int) -> str:
    return "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


@pytest.mark.parametrize("loader", [None, yaml.SafeLoader], ids=["libyaml", "python"])
def test_a_billion_laughs_is_refused_on_the_line_it_passes_the_bound(
    loader: type[yaml.SafeLoader] | None,
) -> None:
    started = time.monotonic()
    with pytest.raises(OverBound) as raised:
        safeload.compose_yaml(bomb(9), loader)
    assert time.monotonic() - started < 2
    # x0..x3 expand to 8,289 nodes through their aliases; x4's first alias passes 10,000.
    assert (raised.value.message, raised.value.line) == (
        "aliases expand to more than 10,000 nodes",
        5,
    )


def test_aliases_within_the_bound_and_merge_keys_load() -> None:
    assert len(safeload.yaml_data(bomb(3))["x2"]) == 9  # 909 nodes through aliases
    merged = safeload.yaml_data("base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n")
    assert merged["c"] == {"x": 1, "y": 2}
    # A large document without aliases is no bomb.
    assert len(safeload.yaml_data("\n".join(f"- {n}" for n in range(50_000)))) == 50_000


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(OverBound, match="an alias refers to a node that holds it"):
        safeload.yaml_data("a: 1\nb: &b [1, [*b]]\n")


def test_yaml_nests_at_most_100_deep() -> None:
    assert safeload.yaml_data(nested_yaml(100)) is not None
    with pytest.raises(OverBound) as raised:
        safeload.yaml_data("ok: 1\n" + nested_yaml(101))
    assert (raised.value.message, raised.value.line) == ("nested more than 100 deep", 2)
    # Deeper than the interpreter's frames go (a limit lowered for the test, so it is quick):
    # the pure-Python composer's recursion is caught.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100 + len(inspect.stack(0)))
    try:
        with pytest.raises(OverBound, match="nested more than 100 deep"):
            safeload.compose_yaml(nested_yaml(300), yaml.SafeLoader)
    finally:
        sys.setrecursionlimit(limit)


def test_the_frontmatter_loader_names_the_files_line() -> None:
    with pytest.raises(YAMLProblem) as raised:
        load_yaml(bomb(9), first_line=3)
    assert (raised.value.message, raised.value.line) == (
        "aliases expand to more than 10,000 nodes",
        7,
    )


def test_json_nests_at_most_100_deep() -> None:
    assert safeload.json_data("[" * 100 + "]" * 100) is not None
    for text in ("[" * 100_000 + "]" * 100_000, "[" * 101 + "]" * 101):
        with pytest.raises(OverBound) as raised:
            safeload.json_data('{"s": "[[[[",\n"a":\n' + text + "}")
        assert (raised.value.message, raised.value.line) == ("nested more than 100 deep", 3)
    with pytest.raises(JSONProblem, match=r"^invalid JSON: nested more than 100 deep$"):
        load_json("[" * 100_000 + "]" * 100_000)


def test_a_file_past_the_size_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evals.json"
    path.write_text("[" + " " * safeload.MAX_FILE_BYTES + "]", encoding="utf-8")
    with pytest.raises(OverBound, match=r"^the file is larger than 5 MiB, the most a suite"):
        safeload.read_text(path)
    path.write_text("[]", encoding="utf-8")
    assert safeload.read_text(path) == "[]"


def test_the_scripted_models_rules_are_bounded_too(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules: []\n" + bomb(9), encoding="utf-8")
    with pytest.raises(RulesFileError, match=r"rules\.yaml:6: invalid YAML: aliases expand"):
        read_rules(path)


def test_a_mock_file_and_a_case_file_past_the_size_bound_are_load_errors(tmp_path: Path) -> None:
    from pytest_plugin_evals.mocks.spec import parse_mock
    from pytest_plugin_evals.model import LoadError
    from pytest_plugin_evals.suites.validate import read_source

    path = tmp_path / "lookup.md"
    path.write_text("---\nresult: ok\n---\n" + "x" * safeload.MAX_FILE_BYTES, encoding="utf-8")
    for read in (parse_mock, read_source):
        with pytest.raises(LoadError, match="the file is larger than 5 MiB"):
            read(path)
