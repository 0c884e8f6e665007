"""The judge's drafts are hostile input: what ``init`` accepts of them, and what it refuses."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.scaffold.cases import case_files, slug, write_skill
from pytest_plugin_evals.scaffold.draft import DraftError, parse
from pytest_plugin_evals.scaffold.files import AlreadyThere, write_case
from pytest_plugin_evals.scaffold.inventory import Part
from pytest_plugin_evals.suites.directory import load_case


def entry(name: str = "a-name", prompt: Any = "Which version?", expected: str = "1.4.1") -> Any:
    return {"name": name, "prompt": prompt, "expected": expected}


def reply(fire: list[Any] | None = None, miss: list[Any] | None = None, **extra: Any) -> str:
    return json.dumps(
        {"should_trigger": fire or [entry()], "should_not_trigger": miss or [entry("b")], **extra}
    )


def test_a_fenced_reply_is_read_and_cut_to_the_count() -> None:
    drafts = parse(
        "```json\n" + reply([entry("a"), entry("b2"), entry("c")], [entry("d")]) + "\n```", 2
    )
    assert [(d.name, d.should_trigger) for d in drafts] == [
        ("a", True), ("b2", True), ("d", False),
    ]  # fmt: skip


def test_control_characters_become_spaces() -> None:
    (fire, _) = parse(reply([entry(prompt="line\x1b[31m one\r\nline\u2028two\x00")]), 3)
    assert fire.prompt == "line [31m one\nline two"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "the reply is not JSON (line 1, column 1): 'an empty reply'"),
        ("{", "the reply is not JSON (line 1, column 2)"),
        (
            "Here are some prompts you could try!",
            "the reply is not JSON (line 1, column 1): 'Here are some prompts you could try!'",
        ),
        ("[1, 2]", "the reply must be a JSON object (got a list)"),
        ("x" * 200_001, "the reply is longer than 200,000 characters"),
        (reply(extra="x"), 'unknown key "extra"'),
        (reply([{"name": "a", "prompt": "p", "expected": "e", "run": "rm -rf /"}]), "unknown key"),
        (reply([entry("../../etc")]), 'should_trigger[0].name "../../etc" won\'t work'),
        (reply([entry("a/b")]), "won't work"),
        (reply([entry(".hidden")]), "won't work"),
        (reply([entry("Upper")]), "won't work"),
        (reply([entry("x" * 49)]), "at most 48 characters"),
        (reply([{"prompt": "p", "expected": "e"}]), "should_trigger[0].name nothing won't work"),
        (reply([entry(prompt="")]), "should_trigger[0].prompt must be a non-empty string"),
        (reply([entry(prompt=["a"])]), "prompt must be a non-empty string (got a list)"),
        (reply([entry(prompt="p" * 2001)]), "prompt is longer than 2,000 characters"),
        (reply([entry(expected="e" * 1001)]), "expected is longer than 1,000 characters"),
        (reply([entry(prompt="---\ntype: regex")]), "starts with '---'"),
        (
            reply([entry(prompt="TODO: describe what the agent should do")]),
            "should_trigger[0].prompt is the blank template's TODO line",
        ),
        (
            reply([entry("same")], [entry("same")]),
            'should_not_trigger[0].name "same" is used twice',
        ),
        (reply(["a string"]), "should_trigger[0] must be an object (got a string)"),
        (json.dumps({"should_trigger": [entry()]}), "should_not_trigger must be a non-empty list"),
    ],
)
def test_a_draft_that_cannot_be_used_says_why(text: str, said: str) -> None:
    with pytest.raises(DraftError) as caught:
        parse(text, 3)
    message = str(caught.value)
    assert said in message
    assert "\n" not in message


def skill(tmp_path: Path, name: str = "next-version", folder: str = "next-version") -> Part:
    path = tmp_path / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: {name}\ndescription: d\n---\n")
    return Part(name, "d", path)


def test_a_drafted_case_loads_as_a_case_with_its_two_graders(tmp_path: Path) -> None:
    part = skill(tmp_path, name="odd.name(1)")
    (fire, miss) = parse(reply([entry(prompt='Say "hi" \\ now')]), 1)
    evals = tmp_path / "evals"
    write_skill(evals, part, [fire, miss])
    case = load_case(evals / "next-version-a-name", evals)
    assert case.prompt == 'Say "hi" \\ now'
    assert case.tags == ("init", "next-version", "should-fire")
    graders = {g.name: g for g in case.graders}
    assert graders["outcome"].type == "llm"
    fired = graders["skill-fired"].config
    # The skill's name is matched literally, plugin-namespaced or not.
    pattern = re.compile(fired["input_match"])
    assert pattern.search('{"skill":"plug:odd.name(1)"}')
    assert pattern.search('{"skill":"odd.name(1)"}')
    assert not pattern.search('{"skill":"plug:oddXname(1)"}')
    assert not pattern.search('{"skill":"plug:odd.name(1)-more"}')
    near = load_case(evals / "next-version-b", evals)
    (near_fired,) = [g for g in near.graders if g.name == "skill-fired"]
    assert (near_fired.config["min"], near_fired.config["max"], near_fired.arm) == (0, 0, "both")


def test_a_case_folder_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "evals" / "c"
    target.mkdir(parents=True)
    (target / "prompt.md").write_text("mine")
    with pytest.raises(AlreadyThere):
        write_case(target, {"prompt.md": "theirs"})
    assert (target / "prompt.md").read_text() == "mine"
    assert [p.name for p in target.parent.iterdir()] == ["c"]


def test_an_unsafe_skill_folder_name_gives_a_safe_prefix(tmp_path: Path) -> None:
    part = Part("x", "", tmp_path / "skills" / "my skill!" / "SKILL.md")
    assert slug(part) == "my-skill"
    assert case_files(part, parse(reply(), 1)[0])["prompt.md"].startswith("---\n")


def test_a_reply_nested_past_the_loaders_bound_is_one_line() -> None:
    """A judge's reply nested 100,000 deep is a DraftError, not a RecursionError."""
    from pytest_plugin_evals.scaffold.draft import DraftError, parse

    with pytest.raises(DraftError, match=r"not JSON .*nested more than"):
        parse("[" * 100_000 + "]" * 100_000, 2)
