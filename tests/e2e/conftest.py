"""End-to-end plumbing: ``pytest evals`` with the real ``claude`` binary and a scripted model."""

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
            f"--eval-claude-bin={claude_bin}", "--eval-json", "out.json", *args,
        )  # fmt: skip
        doc = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        return result, doc

    return run


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
