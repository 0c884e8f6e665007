"""One process's ``--eval-reuse`` decisions (``engine.reuse.ReuseStamps``), called directly:
which runs are fingerprinted, which earlier results folder runs are taken from, which recorded
run is taken or why not, and what a run kept is stamped with. The shell's replay of a taken run
is tested through pytest sessions in tests/integration/test_reuse.py."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents import make_agent
from pytest_plugin_evals.engine.reuse import NOT_REUSED, ReuseStamps
from pytest_plugin_evals.model import Case, PluginInfo
from pytest_plugin_evals.recording import META, run_folder
from pytest_plugin_evals.reuse import PARTS, STAMP, Fingerprint
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.util import digests

STAMP_NAME = "2026-01-02T00-00-00-000Z"


@dataclass
class Run:
    case: Case
    arm: str = "without"
    run: int = 1
    agent_label: str | None = None
    baseline: PluginInfo | None = None
    mock_plan: Any = None


@pytest.fixture
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Case:
    monkeypatch.setenv("EVAL_STAMP_KEY", "k" * 40)
    folder = tmp_path / "evals" / "hi"
    folder.mkdir(parents=True)
    (folder / "prompt.md").write_text("Say hi.")
    return Case(
        name="hi", prompt="Say hi.", source="prose", path=folder / "prompt.md", dir=folder,
        suite_root=folder.parent,
    )  # fmt: skip


AGENT = make_agent("cmd:true")


def test_only_runs_that_spend_in_a_reusable_arm_are_fingerprinted(case: Case) -> None:
    stamps = ReuseStamps(EvalSettings(), STAMP_NAME)
    found = stamps.fingerprint(Run(case), AGENT)
    assert isinstance(found, Fingerprint) and set(found.parts) == set(PARTS)
    assert stamps.fingerprint(Run(case, arm="with"), AGENT) is None
    (case.suite_root / "runs").mkdir()
    assert stamps.fingerprint(Run(case), make_agent(f"replay:{case.suite_root}")) is None
    assert ReuseStamps(EvalSettings(aa=True), STAMP_NAME).fingerprint(Run(case), AGENT) is None
    other = ReuseStamps(EvalSettings(model="another"), STAMP_NAME).fingerprint(Run(case), AGENT)
    assert isinstance(other, Fingerprint) and other.changed(found.parts) == ["model"]


def test_a_case_too_large_to_fingerprint_is_made_with_a_note(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests, "MAX_TREE_FILES", 1)
    (case.dir / "fixture.txt").write_text("data")
    found = ReuseStamps(EvalSettings(), STAMP_NAME).fingerprint(Run(case), AGENT)
    assert found == f"{NOT_REUSED}: too large to fingerprint ({case.dir} holds more than 1 files)"


def test_a_run_stamped_is_taken_again_until_what_shapes_it_changes(case: Case) -> None:
    results = case.suite_root / "results"
    earlier = results / "2026-01-01T00-00-00-000Z"
    stamps = ReuseStamps(EvalSettings(), STAMP_NAME)
    assert stamps.look(Run(case), AGENT)[::2] == (None, None)  # reuse not asked: only made
    folder = run_folder(earlier / "runs", case, "without", 1, None)
    folder.mkdir(parents=True)
    meta = {"agent": "cmd", "finalMessage": "hi", "costUsd": 0.01, "infraError": None}
    (folder / META).write_text(json.dumps(meta))
    (earlier / "aggregate-result.json").write_text("{}")
    fingerprint = stamps.fingerprint(Run(case), AGENT)
    assert isinstance(fingerprint, Fingerprint)
    stamps.stamp(earlier, Run(case), fingerprint, 1_700_000_000.0)
    assert json.loads((folder / STAMP).read_text())["origin"] == str(earlier)

    again = ReuseStamps(EvalSettings(reuse=str(earlier), reuse_max_age=1e12), STAMP_NAME)
    taken, fingerprint_again, note = again.look(Run(case), AGENT)
    assert taken is not None and taken[0] == earlier and note is None
    assert taken[1].stamp.made_at == 1_700_000_000.0 and fingerprint_again == fingerprint
    assert again.look(Run(case, run=2), AGENT)[::2] == (None, None)  # never made: topped up
    changed = ReuseStamps(
        EvalSettings(reuse=str(earlier), reuse_max_age=1e12, judge_model="other"), STAMP_NAME
    )
    assert changed.look(Run(case), AGENT)[2] == f"{NOT_REUSED}: changed since: the judge"
    old = ReuseStamps(EvalSettings(reuse=str(earlier), reuse_max_age=60.0), STAMP_NAME)
    assert old.look(Run(case), AGENT)[2] == f"{NOT_REUSED}: older than --eval-reuse-max-age"


def test_last_is_the_newest_earlier_folder_with_stamps_never_this_sessions_own(
    case: Case,
) -> None:
    results = case.suite_root / "results"
    assert ReuseStamps(EvalSettings(reuse="last"), STAMP_NAME).source(case.suite_root) is None
    assert ReuseStamps(EvalSettings(), STAMP_NAME).source(case.suite_root) is None
    named = ReuseStamps(EvalSettings(reuse=str(results / "x")), STAMP_NAME)
    assert named.source(case.suite_root) == results / "x"


@pytest.mark.parametrize("part", ["model", "agent", "mocks", "baseline"])
def test_a_change_to_a_part_makes_the_run_again_and_names_the_part(
    case: Case, tmp_path: Path, part: str
) -> None:
    """A recorded run is taken while nothing that shapes it changed; a changed model, agent
    program, mock file or baseline plugin makes it again with a note naming what changed."""
    program = tmp_path / "agent.py"
    program.write_text("print('done')\n")
    agent = make_agent(f"cmd:python {program}")
    mocks = case.suite_root / "mocks" / "tracker"
    mocks.mkdir(parents=True)
    (mocks / "search.md").write_text("---\n---\nNo issues found.\n")
    old = tmp_path / "old"
    old.mkdir()
    (old / "skill.md").write_text("v1")
    arm = "baseline" if part == "baseline" else "without"
    item = Run(case, arm=arm, baseline=PluginInfo("helper", None, old))
    earlier = case.suite_root / "results" / "2026-01-01T00-00-00-000Z"
    folder = run_folder(earlier / "runs", case, arm, 1, None)
    folder.mkdir(parents=True)
    meta = {"agent": "cmd", "finalMessage": "done", "costUsd": 0.01, "infraError": None}
    (folder / META).write_text(json.dumps(meta))
    fingerprint = ReuseStamps(EvalSettings(), STAMP_NAME).fingerprint(item, agent)
    assert isinstance(fingerprint, Fingerprint)
    ReuseStamps(EvalSettings(), STAMP_NAME).stamp(earlier, item, fingerprint, 1_700_000_000.0)
    asked = EvalSettings(reuse=str(earlier), reuse_max_age=1e12)
    taken, _, note = ReuseStamps(asked, STAMP_NAME).look(item, agent)
    assert taken is not None and note is None, note
    if part == "model":
        asked = EvalSettings(reuse=str(earlier), reuse_max_age=1e12, model="other-model")
    elif part == "agent":
        program.write_text("print('done')\n# 2.0\n")
    elif part == "mocks":
        (mocks / "search.md").write_text("---\n---\nOne issue.\n")
    else:
        (old / "skill.md").write_text("v2")
    taken, _, note = ReuseStamps(asked, STAMP_NAME).look(item, agent)
    assert taken is None and note == f"{NOT_REUSED}: changed since: {PARTS[part]}"
