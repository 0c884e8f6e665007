"""End-to-end plumbing: ``pytest evals`` with the real ``claude`` binary and a scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_plugin_evals.testing import ScriptedModel

#: ``run(*args) -> (pytester result, JSON document or {})``
Run = Callable[..., tuple[pytest.RunResult, dict[str, Any]]]


@pytest.fixture
def run_evals(
    pytester: pytest.Pytester,
    claude_bin: str,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    """Run ``pytest evals`` with the real binary against the scripted model (on loopback);
    returns the result and the JSON document it wrote."""
    for key, value in scripted_model.env().items():
        monkeypatch.setenv(key, value)

    def run(*args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        out = pytester.path / "out.json"
        out.unlink(missing_ok=True)
        result = pytester.runpytest(
            "evals", "-p", "no:cacheprovider", "--eval-agent", "claude",
            "--eval-claude-bin", claude_bin, "--eval-json", "out.json", *args,
        )  # fmt: skip
        doc = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        return result, doc

    return run
