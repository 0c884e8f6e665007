"""A model's output cannot drive the terminal: escape sequences and control characters in a run
error and an explanation are gone from the failure text and the summary table."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import write_tree

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

#: Clear the screen, home the cursor, retitle the window, colour, backspace.
ESCAPES = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b[31mred\x1b[0m\x08over"


def test_run_error_and_notes_reach_the_terminal_without_escapes(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    write_tree(
        pytester.path / "evals",
        {
            "loud/prompt.md": "---\nruns: 1\n---\nMake noise, café 😀 Δ\n",
            "loud/graders/said.md": "---\ntype: regex\npattern: quiet\n---\n",
        },
    )
    agent = scripted_agent(
        [{"match": "Make noise", "reply": f"{ESCAPES} done", "stderr": ESCAPES, "exit": 3}]
    )
    result = pytester.runpytest("evals", *plugin_args, "--color=no", "--eval-agent", agent)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert not [c for c in out if ord(c) < 0x20 and c != "\n"], "no control character printed"
    result.stdout.fnmatch_lines(
        [
            "score 0.00 (run 1, single arm)",
            "run error: exit 3: red␈over",
            "✗ said: pattern not found in last_message",
            "loud  * exit 3: red␈over",
        ]
    )
