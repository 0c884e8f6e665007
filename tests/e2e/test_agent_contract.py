"""The agent contract, end to end: every agent CLI but Claude Code (``test_claude_agent.py``)
runs the same fixture suite in one ``pytest evals`` session (``contract_kit.py``), and each
test here asserts one behaviour on that session's terminal output, JSON document, kept runs and
the requests its CLI sent. The tests after the shared ones hold what only one CLI does.

The behaviours that need a session of their own (a refused key stops the session, a rate
limit, another option, a plugin with MCP servers) stay in each CLI's module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_plugin_evals.testing.server import TEST_API_KEY
from tests.conftest import agent_cli
from tests.e2e.conftest import CODEX_KEY, by_session
from tests.e2e.contract_kit import (
    CODEX_SKILL_FILE,
    DIALECTS,
    GEMINI_ACTIVATED,
    GEMINI_UNKNOWN_SKILL,
    OPENCODE_LOADED,
    SEALED,
    SECRETS,
    ContractSession,
    run_contract,
)
from tests.e2e.release_kit import SKILL_LISTING, meta
from tests.helpers import FENCE_DONE, assert_fenced


@pytest.fixture(scope="module", params=sorted(DIALECTS))
def contract(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ContractSession]:
    """The agent's contract session (one per agent and module: the tests are grouped by it)."""
    dialect = DIALECTS[request.param]
    binary = agent_cli(dialect.agent)
    session = run_contract(dialect, binary, tmp_path_factory.mktemp(f"contract-{dialect.agent}"))
    try:
        yield session
    finally:
        session.model.stop()


def only(agent: str) -> pytest.MarkDecorator:
    """A test of what ``agent``'s CLI alone does, on its contract session."""
    return pytest.mark.parametrize("contract", [agent], indirect=True)


# -- what every CLI does --------------------------------------------------------------------


def test_every_run_passes_and_the_session_exits_0(contract: ContractSession) -> None:
    assert contract.outcomes() == {"passed": 3}, contract.output[-3000:]
    assert contract.returncode == 0


def test_the_skill_fires_in_the_with_arm_only(contract: ContractSession) -> None:
    case = contract.case("next")
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    fired = {g["name"]: g for g in with_run["graders"]}["skill-fired"]
    assert fired["passed"] is True, fired
    assert with_run["score"] == 1.0 and without_run["score"] == 0.0
    assert case["aggregates"]["delta"] == 1.0
    (call,) = meta(with_run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Skill", contract.dialect.skill_tool)
    assert call["isError"] is False
    assert call["input"]["skill"] in ("release-helper:next-version", "next-version")


def test_only_the_with_arms_first_request_lists_the_plugins_skill(
    contract: ContractSession,
) -> None:
    firsts = contract.firsts("release next")
    assert len(firsts) == 2, [r["prompt"] for r in contract.requests]
    listed = [SKILL_LISTING in json.dumps(r["body"]) for r in firsts]
    assert sorted(listed) == [False, True]


def test_a_shell_call_is_recorded_as_bash(contract: ContractSession) -> None:
    run = contract.run(SEALED)
    assert {g["name"]: g["passed"] for g in run["graders"]} == {"ran": True, "made": True}
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["originalName"]) == ("Bash", contract.dialect.shell_tool)
    assert call["isError"] is False and "base64 -d | sh; env" in call["input"]["command"]
    assert run["answer"] == "Done."
    assert "made.txt" in run["filesCreated"]


def test_the_shell_is_confined_to_the_run(contract: ContractSession) -> None:
    """bubblewrap around the whole CLI holds the fences, whatever its own sandbox does: a file
    beside the project and the evals folder are out of sight, nothing outside is written."""
    (call,) = meta(contract.run(SEALED))["toolCalls"]
    assert_fenced(call["output"], contract.outside, SEALED)
    shown = [r["tool_result"] for r in contract.requests if r["tool_result"]]
    assert any(FENCE_DONE in t for t in shown)  # what the shell printed reached the model


def test_the_operators_secrets_and_the_key_stay_out(contract: ContractSession) -> None:
    run = contract.run(SEALED)
    (call,) = meta(run)["toolCalls"]
    home = next(line for line in call["output"].splitlines() if line.startswith("HOME="))
    assert home.endswith("/home"), home  # the run's own home folder
    sent = json.dumps(contract.model.requests)
    assert "HOME=" in sent  # the environment did reach the model
    for name, value in SECRETS.items():
        assert value not in sent and name not in call["output"]
    key = contract.dialect.key
    if key is not None:  # the CLI's key: redacted from the kept run and the document
        kept = (Path(run["tracePath"]).parent / "meta.json").read_text(encoding="utf-8")
        assert key not in kept and key not in json.dumps(contract.doc)


# -- what one CLI does ----------------------------------------------------------------------


@only("codex")
def test_codex_reads_the_skill_with_its_shell_and_reports_tokens_without_a_price(
    contract: ContractSession,
) -> None:
    case = contract.case("next")
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    # Codex reports the tokens of both requests (1200 in, 40 out each) and no price.
    assert with_run["inputTokens"] == 2400 and with_run["outputTokens"] == 80
    assert with_run["costUsd"] == 0 and with_run["costUnknown"] is True
    assert contract.doc["costUnknown"] is True
    (call,) = meta(with_run)["toolCalls"]
    # Codex runs the command in the user's shell: bash, wherever the sandbox's PATH has it.
    shell, _, command = call["input"]["command"].partition(" ")
    assert shell.endswith("/bash") and command == f"-lc 'cat {CODEX_SKILL_FILE}'"
    assert "Bump the patch part" in call["output"]
    (missed,) = meta(without_run)["toolCalls"]
    assert (missed["name"], missed["originalName"]) == ("Bash", "exec_command")
    assert missed["isError"] is True
    # Three sessions (two arms, the sealed case), each offered exec_command.
    sessions = by_session(contract.requests, "session-id")
    assert len(sessions) == 3
    # How Codex lists the plugin's skill (its developer message): in the with arm only.
    listed = "release-helper:next-version: Work out the next semantic version"
    firsts = contract.firsts("release next")
    assert sorted(listed in r["system"] for r in firsts) == [False, True]
    (fired,) = meta(with_run)["toolCalls"]
    assert fired["input"]["skill"] == "release-helper:next-version"
    assert all("exec_command" in rs[0]["tools"] for rs in sessions.values())
    # The key went only as the (redacted) authorization header, never in a request's body.
    assert all(r["headers"]["authorization"] == "<redacted>" for r in contract.model.requests)
    assert all(CODEX_KEY not in json.dumps(r["body"]) for r in contract.model.requests)
    (call,) = meta(contract.run(SEALED))["toolCalls"]
    assert "PWD=" in call["output"]


@only("copilot")
def test_copilot_reports_no_tokens_and_keeps_its_key_from_the_shell(
    contract: ContractSession,
) -> None:
    case = contract.case("next")
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    # Copilot reports no tokens for a custom provider: unknown, not zero.
    assert with_run["inputTokens"] is None and with_run["outputTokens"] is None
    (missed,) = meta(without_run)["toolCalls"]
    assert missed["isError"] is True and "not found" in missed["output"]
    # The provider key reaches Copilot but not its shell (--secret-env-vars).
    (call,) = meta(contract.run(SEALED))["toolCalls"]
    assert "COPILOT_PROVIDER_API_KEY" not in call["output"]
    assert TEST_API_KEY not in json.dumps([r["body"] for r in contract.requests])


@only("gemini")
def test_gemini_adds_claude_codes_skill_name_and_offers_only_listed_tools(
    contract: ContractSession,
) -> None:
    with_run = contract.run("next")
    (call,) = with_run["toolCallList"]
    # Claude Code's form is added, so an input_match written for claude means the same here.
    assert json.loads(call["input"]) == {
        "name": "next-version",
        "skill": "release-helper:next-version",
    }
    assert with_run["inputTokens"] == 2 * contract.model.usage[0]
    assert all(r["model"] == "gemini-2.5-flash" for r in contract.requests)
    results = [r["tool_result"] for r in contract.requests if r["tool_result"]]
    assert any(GEMINI_ACTIVATED in t and "Bump the patch part" in t for t in results)
    assert any(GEMINI_UNKNOWN_SKILL in t for t in results)
    (shell,) = meta(contract.run(SEALED))["toolCalls"]
    assert shell["input"]["command"].endswith("| base64 -d | sh; env")
    (first,) = contract.firsts("fences")
    assert "run_shell_command" in first["tools"]
    assert "write_file" not in first["tools"]  # not listed by the case: not offered


@only("opencode")
def test_opencode_prices_the_tokens_and_names_each_run_s_session(
    contract: ContractSession,
) -> None:
    case = contract.case("next")
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    # opencode prices the tokens from its own catalog: 1200 in, 40 out per request.
    assert with_run["inputTokens"] == 2400 and with_run["outputTokens"] == 80
    assert with_run["costUsd"] == pytest.approx(2 * (1200 * 3 + 40 * 15) / 1e6)
    (call,) = meta(with_run)["toolCalls"]
    assert call["input"] == {"name": "next-version", "skill": "release-helper:next-version"}
    assert OPENCODE_LOADED in call["output"]
    (missed,) = meta(without_run)["toolCalls"]
    assert missed["isError"] is True and OPENCODE_LOADED not in (missed["output"] or "")
    # No title request (the run names its session); the case's runs are offered the scoped
    # readers and the skill tool only.
    sessions = by_session(contract.requests, "x-session-id")
    assert len(sessions) == 3
    assert all("title generator" not in r["system"] for rs in sessions.values() for r in rs)
    firsts = contract.firsts("release next")
    assert all(r["tools"] == ["glob", "grep", "read", "skill"] for r in firsts)


@only("qwen")
def test_qwen_reports_tokens_without_a_price_and_keeps_its_key_out_of_the_kept_run(
    contract: ContractSession,
) -> None:
    with_run = contract.run("next")
    (call,) = with_run["toolCallList"]
    # Qwen Code's skill input is Claude Code's form already.
    assert json.loads(call["input"]) == {"skill": "release-helper:next-version"}
    assert with_run["inputTokens"] and with_run["outputTokens"]
    assert with_run["costUnknown"] is True
    assert "cost unknown: qwen reports tokens, no price" in with_run["notes"]
    assert all(r["model"] == "fake-model" for r in contract.requests)
    for first in contract.firsts("release next"):
        offered = set(first["tools"])
        assert {"skill", "read_file", "glob", "grep_search"} <= offered
        assert not offered & {"run_shell_command", "write_file", "edit", "web_fetch", "agent"}
    kept = (Path(contract.run(SEALED)["tracePath"]).parent / "meta.json").read_text("utf-8")
    assert "OPENAI_BASE_URL=" in kept  # the shell's environment is in the kept run
