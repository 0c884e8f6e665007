"""``--eval-agents``' values read into labelled agents (``agents.roster``): the labels given
and made, the specs that take commas, and each wrong value as one line. Called directly, no
pytest session (the usage line a session prints: tests/integration/test_several_agents.py)."""

from __future__ import annotations

import fnmatch
import shlex
import sys

import pytest

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.roster import parse_agents

CMD = "cmd:" + shlex.join([sys.executable, "agent.py", "--x=1,2"])


def test_labels_given_and_made_in_the_order_given() -> None:
    """An agent CLI is labelled by its name, an unlabelled cmd:/py: agent cmd1, cmd2 …, and a
    cmd: spec takes the rest of its value, commas included."""
    assert parse_agents(["claude,codex"]) == (("claude", "claude"), ("codex", "codex"))
    assert parse_agents([CMD, CMD + " two"]) == (("cmd1", CMD), ("cmd2", CMD + " two"))
    assert parse_agents(["fast=" + CMD, " slow = codex"]) == (("fast", CMD), ("slow", "codex"))
    assert parse_agents(["claude, fast.v2=" + CMD]) == (("claude", "claude"), ("fast.v2", CMD))


@pytest.mark.parametrize(
    ("values", "line"),
    [
        (["claude,nope"], "--eval-agents must be one of * (got 'nope')"),
        (["claude", "claude"], "--eval-agents: two agents are labelled 'claude': name them "
                               "(LABEL=SPEC, e.g. claude2=claude)"),
        (["with=claude"], "--eval-agents: the label 'with' must be a letter then letters, "
                          "digits, _ or . (no -), and not baseline, single, with, without"),
        (["a-b=claude"], "--eval-agents: the label 'a-b' must be *"),
        (["my agent=cmd:./a.sh --x=1"], "--eval-agents: the label 'my agent' must be *"),
        (["claude,,codex"], "--eval-agents: an empty agent in 'claude,,codex'"),
        (["fast=,codex"], "--eval-agents: an empty agent fast= in 'fast=,codex'"),
        ([" "], "--eval-agents: no agent named (e.g. claude,codex)"),
    ],
)  # fmt: skip
def test_a_wrong_value_is_one_line(values: list[str], line: str) -> None:
    with pytest.raises(AgentError) as caught:
        parse_agents(values)
    assert fnmatch.fnmatchcase(str(caught.value), line), str(caught.value)
    assert "\n" not in str(caught.value)
