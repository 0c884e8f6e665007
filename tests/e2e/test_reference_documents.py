"""A document the reference (``claude plugin eval``) wrote, read by this plugin: the same
``dir`` for every case (the case folder relative to the plugin's folder), so
``--eval-compare`` pairs its cases with ours one by one; and ``--eval-compare last`` passes
over the results folder the reference wrote beside ours (its choice called on that folder).
The same example suite against the same scripted model gets the same verdicts, scores and Δ
in both (the reference's parity)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pytest_plugin_evals.reporting.earlier import earlier_session, same_kind
from pytest_plugin_evals.testing import ScriptedModel
from tests.e2e.test_reference_parity import (  # noqa: F401 (a fixture)
    example_rules,
    plugin,
    verdicts,
)


def pytest_session(
    folder: Path, env: dict[str, str], claude_bin: str, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(folder / "evals"), "-p", "no:cacheprovider",
         "--eval-agent", "claude", f"--eval-claude-bin={claude_bin}",
         "--eval-allow-tools", "Write", "--rootdir", str(folder), *args],
        env=env, cwd=folder, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def test_a_reference_document_pairs_case_by_case(
    plugin: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    claude_bin: str,
) -> None:
    # A case in a group folder: the reference drops the group from the name, not from dir.
    shutil.move(plugin / "evals" / "decoy-capital", plugin / "evals" / "group" / "decoy-capital")
    # One run a case: the pairing and the parity do not depend on how many (each run is one
    # agent run of each arm, in both).
    prompt = plugin / "evals" / "suggests-next-version" / "prompt.md"
    prompt.write_text(prompt.read_text().replace("runs: 2\n", "runs: 1\n"))
    home = tmp_path / "operator-home"
    home.mkdir()
    with ScriptedModel(example_rules()) as model:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), **model.env()}
        done = subprocess.run(
            [claude_bin, "plugin", "eval", str(plugin), "--trust-plugin", "--no-publish",
             "--allow-tools", "Write"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        results = plugin / "evals" / "results"
        (written,) = list(results.iterdir())
        reference: dict[str, Any] = json.loads((written / "aggregate-result.json").read_text())
        assert "claudeVersion" in reference, done.stderr[-2000:]

        # last: the reference's folder is no session of ours to compare with (what the option
        # prints of it is test_compare_last.py's, on sessions of ours).
        own = tmp_path / "own-results"
        document, earlier, said = earlier_session(
            "last", "--eval-compare", results, own, same_kind("claude", (), None, False)
        )
        assert document is None and earlier is None
        assert said == [
            f"--eval-compare last: no earlier comparable session under {results} — nothing to "
            f"compare with; passed over results/{written.name} (written by claude plugin eval)"
        ]

        # By path: every case of ours meets the reference's.
        out = tmp_path / "ours.json"
        second = pytest_session(
            plugin, env, claude_bin, "--eval-compare", str(written), "--eval-json", str(out)
        )
        assert out.exists(), second.stdout[-3000:]
    # The same suite, the same script: every grader's verdict, every score and Δ agree.
    ours: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    mine = verdicts(ours)
    assert mine == verdicts(reference)
    assert mine["suggests-next-version"]["delta"] == 1
    theirs = {c["name"]: c["dir"] for c in reference["cases"]}
    assert theirs["decoy-capital"] == "evals/group/decoy-capital"
    assert {c["name"]: c["dir"] for c in ours["cases"]} == theirs
    decoy = next(c for c in ours["cases"] if c["name"] == "decoy-capital")
    assert decoy["suiteDir"] == "group/decoy-capital"
    comparison = ours["comparison"]
    assert comparison["against"] == str(written / "aggregate-result.json")
    assert comparison["counts"]["new"] == 0 and comparison["counts"]["gone"] == 0
    paired = {c["name"]: (c["before"], c["after"]) for c in comparison["cases"]}
    assert set(paired) == set(theirs)
    # The same script: the same scores on both sides.
    scores = {c["name"]: c["aggregates"]["score"] for c in reference["cases"]}
    assert {name: before for name, (before, _) in paired.items()} == scores
    assert {name: after for name, (_, after) in paired.items()} == scores
    assert all(c["verdict"] in ("equivalent", "inconclusive") for c in comparison["cases"])
