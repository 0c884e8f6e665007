"""End-to-end plumbing: ``pytest evals`` with the real ``claude`` binary (or another agent CLI)
and a scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import ScriptedModel
from pytest_plugin_evals.testing.server import TEST_API_KEY
from tests.conftest import agent_cli

#: ``run(*args) -> (pytester result, JSON document or {})``
Run = Callable[..., tuple[pytest.RunResult, dict[str, Any]]]


#: The key Codex runs read from ``OPENAI_API_KEY`` (the tests check no request carries it).
CODEX_KEY = "sk-test-codex-key-0123456789"


def first_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run's first model call among a CLI's logged ``requests`` (the only ones without a
    tool result): what the run was offered."""
    return [r for r in requests if r["tool_result"] is None]


def by_session(requests: list[dict[str, Any]], header: str) -> dict[str, list[dict[str, Any]]]:
    """A CLI's logged ``requests`` by the session its ``header`` names (one session a run,
    subagents their own), oldest first."""
    found: dict[str, list[dict[str, Any]]] = {}
    for request in requests:
        found.setdefault(request["headers"].get(header, ""), []).append(request)
    return found


def cli_environment(agent: str, model: ScriptedModel) -> dict[str, str]:
    """The variables that point ``agent``'s CLI at the scripted model: each CLI's usual ones."""
    if agent == "copilot":
        return {
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_BASE_URL": model.base_url,
            "COPILOT_PROVIDER_API_KEY": TEST_API_KEY,
            "COPILOT_MODEL": "claude-sonnet-4",
        }
    if agent == "codex":
        return {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_API_KEY": CODEX_KEY}
    if agent == "gemini":
        return model.gemini_env()
    if agent == "qwen":
        return {
            "OPENAI_BASE_URL": model.openai_base_url,
            "OPENAI_API_KEY": CODEX_KEY,
            "OPENAI_MODEL": "fake-model",
        }
    return model.env()


def cli_runner(
    pytester: pytest.Pytester,
    agent: str,
    binary: str,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    *,
    default_model: str | None = None,
) -> Run:
    """``run(*args, model=default_model)``: ``pytest evals --eval-agent <agent>`` with the real
    binary against the scripted model; returns the result and the JSON document."""
    for key, value in cli_environment(agent, model).items():
        monkeypatch.setenv(key, value)

    def run(
        *args: str, model: str | None = default_model
    ) -> tuple[pytest.RunResult, dict[str, Any]]:
        out = pytester.path / "out.json"
        out.unlink(missing_ok=True)
        pinned = ("--eval-model", model) if model else ()
        result = pytester.runpytest(
            "evals", "-p", "no:cacheprovider", "--eval-agent", agent,
            f"--eval-{agent}-bin={binary}", *pinned, "--eval-json", "out.json", *args,
        )  # fmt: skip
        doc = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        return result, doc

    return run


@pytest.fixture
def run_evals(
    pytester: pytest.Pytester,
    claude_bin: str,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    """Run ``pytest evals`` with the real binary against the scripted model (on loopback);
    returns the result and the JSON document it wrote."""
    return cli_runner(pytester, "claude", claude_bin, scripted_model, monkeypatch)


def _cli_fixtures(agent: str, **runner: Any) -> tuple[Any, Any]:
    """The session fixture ``<agent>_bin`` (:func:`tests.conftest.agent_cli`) and the fixture
    ``run_<agent>`` (:func:`cli_runner` with that binary)."""

    def binary() -> str:
        return agent_cli(agent)

    def run(
        pytester: pytest.Pytester,
        request: pytest.FixtureRequest,
        scripted_model: ScriptedModel,
        monkeypatch: pytest.MonkeyPatch,
    ) -> Run:
        found: str = request.getfixturevalue(f"{agent}_bin")
        return cli_runner(pytester, agent, found, scripted_model, monkeypatch, **runner)

    binary.__name__, run.__name__ = f"{agent}_bin", f"run_{agent}"
    run.__doc__ = f"``pytest evals --eval-agent {agent}`` with the real binary (see cli_runner)."
    binary_fixture = pytest.fixture(scope="session", name=binary.__name__)(binary)
    return binary_fixture, pytest.fixture(name=run.__name__)(run)


copilot_bin, run_copilot = _cli_fixtures("copilot")
opencode_bin, run_opencode = _cli_fixtures("opencode")
gemini_bin, run_gemini = _cli_fixtures("gemini")
qwen_bin, run_qwen = _cli_fixtures("qwen")
#: Codex with a pinned model id (``model=None``: its default model, in code mode).
codex_bin, run_codex = _cli_fixtures("codex", default_model="fake-model")


@pytest.fixture
def run_both() -> Callable[..., tuple[dict[str, Any], dict[str, Any]]]:
    """Run a plugin's suite under the reference and under pytest (see :func:`_run_both`)."""
    return _run_both


def _run_both(
    plugin: Path, model: ScriptedModel, claude_bin: str, work: Path, *, grants: tuple[str, ...] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Evaluate ``plugin`` with the reference (``claude plugin eval``) and with pytest, against
    the same scripted model; returns both JSON documents (reference first)."""
    home = work / "operator-home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), **model.env()}
    reference, ours = work / "reference.json", work / "ours.json"
    ref_grants = ["--allow-tools", *grants] if grants else []
    done = subprocess.run(
        [claude_bin, "plugin", "eval", str(plugin), "--trust-plugin", "--no-publish",
         *ref_grants, "--json", str(reference)],
        env=env, cwd=work, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert reference.exists(), done.stderr[-2000:]
    our_grants = [arg for g in grants for arg in ("--eval-allow-tools", g)]
    mine = subprocess.run(
        [sys.executable, "-m", "pytest", str(plugin / "evals"), "-p", "no:cacheprovider",
         "--eval-agent", "claude", f"--eval-claude-bin={claude_bin}", *our_grants,
         "--eval-json", str(ours), "--rootdir", str(plugin)],
        env=env, cwd=plugin, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert ours.exists(), mine.stdout[-3000:]
    return (
        json.loads(reference.read_text(encoding="utf-8")),
        json.loads(ours.read_text(encoding="utf-8")),
    )
