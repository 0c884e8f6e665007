"""The registry of agent CLIs, and what is derived from it: ``--eval-agent``'s names, the
``--eval-<name>-bin`` options, each adapter's operator variables and capabilities, the
redacted credentials, the canonical tool names, and the docs' table."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from pytest_plugin_evals.agents import (
    CLI_AGENTS,
    AgentError,
    agent_forms,
    check_spec,
    make_agent,
    split_spec,
)
from pytest_plugin_evals.agents.base import capabilities_of, credentials_of, passed_of, spec_of
from pytest_plugin_evals.agents.canonical import canonical
from pytest_plugin_evals.agents.credentials import credential_names
from pytest_plugin_evals.agents.registry import (
    TABLE_END,
    TABLE_START,
    markdown_table,
    names,
    specs,
)
from pytest_plugin_evals.agents.spec import read_spec
from pytest_plugin_evals.settings.options import OPTIONS
from pytest_plugin_evals.util.environment import allowed_environment
from pytest_plugin_evals.util.redact import Redactor, secrets_in
from tests.conftest import agent_cli

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reference" / "agents.md"


def test_the_registry_lists_every_agent_cli_the_default_first() -> None:
    assert names()[0] == "claude"
    assert {"claude", "copilot", "codex", "opencode", "gemini"} <= set(names())
    assert len(set(names())) == len(names())


def test_the_names_known_at_start_up_are_the_registrys() -> None:
    """The options are made before any spec module is imported, from a list of the agents:
    it is the registry's, in its order, with each agent's binary."""
    declared = tuple((s.name, s.binary) for s in specs())
    assert declared == CLI_AGENTS, (
        f"pytest_plugin_evals/agents/__init__.py's CLI_AGENTS differs from the registry: {declared}"
    )
    assert all(s.bin_option == f"--eval-{s.name}-bin" for s in specs())


def test_the_docs_table_is_the_registrys() -> None:
    text = DOCS.read_text(encoding="utf-8")
    shown = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()
    assert shown == markdown_table(), (
        "docs/reference/agents.md's agents table differs from the registry: replace it with\n"
        + markdown_table()
    )


@pytest.mark.parametrize("name", names())
def test_eval_agent_takes_every_declared_agent(name: str) -> None:
    assert split_spec(f" {name} ") == (name, "")
    assert check_spec(name) == name
    assert f'"{name}"' in agent_forms()


def test_an_unknown_agent_is_one_line_naming_every_form() -> None:
    with pytest.raises(AgentError) as info:
        split_spec("qwen-coder")
    message = str(info.value)
    assert "\n" not in message and message.endswith("(got 'qwen-coder')")
    for name in names():
        assert f'"{name}"' in message
    assert '"cmd:<command line>"' in message


def test_every_declared_agent_has_a_bin_option_and_the_agent_option_names_it() -> None:
    flags = {o.flag: o for o in OPTIONS}
    for spec in specs():
        assert spec.bin_option in flags, spec.name
        assert f'"{spec.name}"' in flags["--eval-agent"].help


@pytest.mark.parametrize("name", names())
def test_each_adapter_is_its_declaration(name: str, tmp_path: Path) -> None:
    """The adapter ``--eval-agent NAME`` makes carries its spec: its name, capabilities,
    operator variables and credentials are the declared ones, not the defaults."""
    binary = tmp_path / name
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    agent = make_agent(name, claude_bin=str(binary), binaries={name: str(binary)})
    spec = spec_of(agent)
    assert spec is not None and spec.name == name == agent.name
    assert capabilities_of(agent) is spec.capabilities
    assert credentials_of(agent) == spec.credentials
    if name != "opencode":  # its variables are those of the one provider a model names
        assert passed_of(agent, None) is spec.passed


def test_capabilities_are_declared_truthfully() -> None:
    by_name = {s.name: s.capabilities for s in specs()}
    assert by_name["claude"].loads_history and by_name["claude"].prices
    assert not by_name["copilot"].prices and not by_name["copilot"].reports_tokens
    assert not by_name["codex"].prices and by_name["codex"].nests_sandbox
    assert not by_name["gemini"].prices and by_name["gemini"].reports_tokens
    for spec in specs():
        assert spec.capabilities.prices or spec.cost_note, spec.name
        assert spec.capabilities.network_forwarder, spec.name  # each reaches its model


def test_a_run_sees_its_own_agents_variables_only() -> None:
    operator = {
        "PATH": "/bin",
        "ANTHROPIC_API_KEY": "sk-ant-0123456789",
        "GEMINI_API_KEY": "gem-0123456789",
        "COPILOT_PROVIDER_API_KEY": "cop-0123456789",
    }
    by_name = {s.name: s for s in specs()}
    seen = allowed_environment(operator, (), by_name["gemini"].passed)
    assert set(seen) == {"PATH", "GEMINI_API_KEY"}
    seen = allowed_environment(operator, (), by_name["copilot"].passed)
    assert set(seen) == {"PATH", "COPILOT_PROVIDER_API_KEY"}


def test_declared_credentials_are_redacted_whatever_their_names() -> None:
    env = {"ODD_NAME": "value-0123456789", "OTHER": "plain-0123456789"}
    assert secrets_in(env) == {}
    found = secrets_in(env, ("ODD_NAME",))
    assert found == {"ODD_NAME": "value-0123456789"}
    assert Redactor(found).text("it is value-0123456789") == "it is [redacted ODD_NAME]"
    every = {n for s in specs() for n in s.credentials}
    assert set(credential_names(dict.fromkeys(every, "x"))) == every


def test_canonical_tool_names_come_from_each_declaration() -> None:
    for spec in specs():
        for own, canon in spec.tools.items():
            assert canonical(spec.name, own) == canon
    assert canonical("gemini", "run_shell_command") == "Bash"
    assert canonical("claude", "Bash") == "Bash"
    assert canonical("cmd", "whatever") == "whatever"


@pytest.mark.parametrize("name", names())
def test_the_installed_binary_is_the_declared_version(name: str) -> None:
    """scripts/setup.sh pins what each declaration says it is tested with."""
    spec = next(s for s in specs() if s.name == name)
    binary = os.environ.get("EVAL_CLAUDE_BIN") if name == "claude" else None
    binary = binary if binary and os.path.isfile(binary) else agent_cli(name)
    done = subprocess.run(
        [binary, *spec.version_args], capture_output=True, text=True, timeout=120, check=False
    )
    assert spec.version in done.stdout + done.stderr, (done.stdout, done.stderr)
    setup = (Path(__file__).resolve().parents[2] / "scripts" / "setup.sh").read_text("utf-8")
    if name == "claude":  # Claude Code's is set apart
        assert f"CLAUDE_CODE_VERSION={spec.version}\n" in setup
    else:
        assert f'"{spec.package}@{spec.version}"' in setup


# -- every list of agents in the docs is the registry's ------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
#: An agent named in prose: `copilot`, GitHub Copilot CLI, Codex CLI, Gemini CLIs, Qwen Code ...
MENTION = re.compile(
    r"(?:GitHub |OpenAI )?`?(" + "|".join(names()) + r")`?(?: CLIs?| Code)?", re.IGNORECASE
)
#: What may stand between two agents of one list.
BETWEEN = re.compile(r"\s*(?:,|,?\s+and|,?\s+or)\s+", re.IGNORECASE)
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
COUNTED = re.compile(r"\b(" + "|".join(NUMBERS) + r") agent CLIs\b", re.IGNORECASE)


def prose_files() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "examples").rglob("README.md")),
    ]


def agent_lists(text: str) -> list[tuple[list[str], str]]:
    """Every enumeration of agents in ``text`` (``A, B and C``; a table's first column), each
    with its paragraph; fenced blocks (program output) are left out."""
    found: list[tuple[list[str], str]] = []
    for block in re.split(r"\n\s*\n", FENCED.sub("", text)):
        rows = block.strip().splitlines()
        if rows and all(row.startswith("|") for row in rows):
            firsts = [row.split("|")[1].strip() for row in rows]
            found.append(([n for n in names() if f"`{n}`" in firsts], block))
            continue
        flat = " ".join(block.split())
        chain: list[str] = []
        end = 0
        for match in MENTION.finditer(flat):
            if chain and BETWEEN.fullmatch(flat[end : match.start()]):
                chain.append(match.group(1).lower())
            else:
                found.append((chain, flat))
                chain = [match.group(1).lower()]
            end = match.end()
        found.append((chain, flat))
    return found


@pytest.mark.parametrize("path", prose_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_list_of_agents_names_every_declared_agent(path: Path) -> None:
    """A list of four or more of the agent CLIs is a list of them all: an agent it leaves out
    must at least be named in the same paragraph (saying why), so a new agent is never left out
    of the README's or the docs' lists unsaid."""
    others = set(names()) - {"claude"}
    for chain, paragraph in agent_lists(path.read_text(encoding="utf-8")):
        if len(set(chain) & others) < 4:
            continue
        named = {m.group(1).lower() for m in MENTION.finditer(paragraph)}
        missing = sorted(others - named)
        assert not missing, f"{path.name}: a list of agents leaves out {missing}: {chain}"


@pytest.mark.parametrize(
    "path",
    [
        *prose_files(),
        *sorted((ROOT / "tests").rglob("*.py")),
        *sorted(ROOT.glob("examples/*/*.py")),
    ],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_a_count_of_agent_clis_is_the_registrys(path: Path) -> None:
    declared = NUMBERS[len(names()) - 1]
    for match in COUNTED.finditer(path.read_text(encoding="utf-8")):
        assert match.group(1).lower() == declared, (
            f"{path.name}: {match.group(0)!r}, where the registry declares {declared}"
        )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("title: [a list]\npackage: p\nversion: '1'\nendpoints: {}\ncredentials: []\ntools: {}\n",
         "a value of the wrong type"),
        ("title: t\npackage: p\nversion: 1.0\nendpoints: {}\ncredentials: []\ntools: {}\n",
         "a value of the wrong type"),
        ("title: t\npackage: p\nversion: '1'\nendpoints: {}\ncredentials: []\ntools: {}\n"
         "rank: 1.5\n", "rank is not a whole number"),
        ("title: t\npackage: p\nversion: '1'\nendpoints: {}\ncredentials: []\ntools: {}\n"
         "capabilities: {prices: yes please}\n", "a value of the wrong type"),
        ("title: t\npackage: p\nversion: '1'\nendpoints: {}\ncredentials: []\ntools: {}\n"
         "colour: blue\n", "unexpected keyword argument 'colour'"),
        ("- a list\n", "agents/newcli/spec.yaml: "),
    ],
)  # fmt: skip
def test_a_declaration_of_the_wrong_shape_is_one_line_naming_its_file(
    tmp_path: Path, text: str, says: str
) -> None:
    folder = tmp_path / "newcli"
    folder.mkdir()
    (folder / "spec.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(RuntimeError, match=re.escape(says)) as caught:
        read_spec(folder)
    assert str(caught.value).startswith("agents/newcli/spec.yaml: ")
    assert "\n" not in str(caught.value)


def test_a_declaration_reads_every_field_of_the_spec(tmp_path: Path) -> None:
    folder = tmp_path / "newcli"
    folder.mkdir()
    (folder / "spec.yaml").write_text(
        "title: New CLI\npackage: new-cli\nversion: 2.0.1\nendpoints: {NEW_URL: null}\n"
        "passed: {names: [NEW_KEY], prefixes: [NEW_], switched: {NEW_CLOUD: [CLOUD_]}}\n"
        "credentials: [NEW_KEY]\ntools: {sh: Bash}\ncapabilities: {prices: false}\nrank: 7\n"
        "binary: newcli-bin\nversion_args: [version]\n",
        encoding="utf-8",
    )
    spec = read_spec(folder)
    assert (spec.name, spec.binary, spec.version, spec.rank) == ("newcli", "newcli-bin", "2.0.1", 7)
    assert spec.passed.prefixes_in({"NEW_CLOUD": "1"}) == ("NEW_", "CLOUD_")
    assert spec.passed.names == {"NEW_KEY"} and spec.credentials == ("NEW_KEY",)
    assert dict(spec.endpoints) == {"NEW_URL": None} and dict(spec.tools) == {"sh": "Bash"}
    assert spec.version_args == ("version",)
    assert spec.cost_note == "cost unknown: newcli reports tokens, no price"
