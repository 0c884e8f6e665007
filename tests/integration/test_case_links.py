"""A case input that is a symbolic link leading out of the case folder is a load error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

GRADER = "---\ntype: regex\npattern: hi\n---\n"
PROMPT = "---\nruns: 1\n---\nSay hi\n"
#: What the link leads to: a valid prompt, so only the link check stops it from running.
SECRET = "---\nruns: 1\n---\nSay hi, the secret is hunter2\n"

CASE_YAML = """\
schema_version: "1.1"
name: leaky-fixtures
context:
  add_dirs: [fixtures]
execution:
  prompt: Say hi
  max_turns: 1
graders:
  - name: hi
    type: regex
    pattern: hi
"""


def test_a_linked_prompt_is_one_load_error_and_the_rest_runs(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    outside = pytester.path / "outside"
    write_tree(outside, {"secret.md": SECRET})
    write_tree(
        pytester.path,
        {
            "evals/good/prompt.md": PROMPT,
            "evals/good/graders/hi.md": GRADER,
            "evals/leaky-prompt/graders/hi.md": GRADER,
            "evals/leaky-fixtures/case.yaml": CASE_YAML,
            "evals/leaky-fixtures/fixtures/readme.txt": "fixtures\n",
        },
    )
    (pytester.path / "evals/leaky-prompt/prompt.md").symlink_to(outside / "secret.md")
    (pytester.path / "evals/leaky-fixtures/fixtures/notes.md").symlink_to(outside / "secret.md")
    secret = os.path.realpath(outside / "secret.md")
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])

    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json"
    )

    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    prompt_line = (
        f"evals/leaky-prompt: prompt.md is a link to a file outside the case directory ({secret})"
        " — it must be a file inside it"
    )
    fixtures_line = (
        'evals/leaky-fixtures/case.yaml:4: context.add_dirs[0] path "fixtures" holds a link '
        f'leading outside the case directory: "fixtures/notes.md" ({secret}) — everything in it '
        "must stay inside the case directory"
    )
    for line in (prompt_line, fixtures_line):
        assert line in result.stdout.lines
    output = result.stdout.str() + result.stderr.str()
    assert "hunter2" not in output and "Traceback" not in output

    doc = read_doc("o.json")
    assert [c["name"] for c in doc["cases"]] == ["good"]
    assert doc["cases"][0]["aggregates"]["score"] == 1.0
    errors = {
        (Path(e["path"]).relative_to(pytester.path).as_posix(), e["line"]): e["message"]
        for e in doc["loadErrors"]
    }
    assert errors == {
        ("evals/leaky-prompt", None): prompt_line.removeprefix("evals/leaky-prompt: "),
        ("evals/leaky-fixtures/case.yaml", 4): fixtures_line.removeprefix(
            "evals/leaky-fixtures/case.yaml:4: "
        ),
    }
