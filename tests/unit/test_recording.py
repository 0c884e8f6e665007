"""Record a run, replay it: the same transcript comes back."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_plugin_evals import recording
from pytest_plugin_evals.agents.base import AgentError, RunRequest
from pytest_plugin_evals.agents.replay import ReplayAgent
from pytest_plugin_evals.model import Arm, Case, MockCall, SourceKind, ToolCall, Transcript
from pytest_plugin_evals.recording import case_key, record_run, run_folder
from pytest_plugin_evals.sandbox import Sandbox


def make_case(
    tmp_path: Path, name: str = "next", source: SourceKind = "prose", rel: str = "next"
) -> Case:
    suite = tmp_path / "plugin" / "evals"
    where = suite / rel
    if source in ("prose", "case_yaml", "mixed"):
        return Case(name, "What next?", source, where / "prompt.md", where, suite)
    return Case(name, "What next?", source, where, where.parent, suite)


def request_for(case: Case, box: Sandbox, arm: Arm = "with", run: int = 1) -> RunRequest:
    return RunRequest(
        case=case,
        arm=arm,
        run=run,
        prompt=case.prompt,
        sandbox=box,
        plugin_dir=None,
        model=None,
        max_turns=10,
        timeout_seconds=60,
        allowed_tools=(),
    )


def made_run(tmp_path: Path) -> tuple[Transcript, Sandbox]:
    """A finished run in its sandbox: a trace, files created, every transcript field set."""
    box = Sandbox.create(tmp_path / "run")
    box.snapshot()
    (box.cwd / "notes").mkdir()
    (box.cwd / "notes" / "RELEASE.md").write_text("# 1.4.1\n", encoding="utf-8")
    (box.cwd / "big.bin").write_bytes(b"x" * 2048)
    (box.cwd / "café.txt").write_text("é", encoding="utf-8")
    box.trace_file.write_text('{"type":"system","subtype":"init"}\n{"type":"result"}\n', "utf-8")
    transcript = Transcript(
        final_message="Release 1.4.1 — notes written.",
        tool_calls=[
            ToolCall("Skill", {"skill": "rel:next-version"}, "Launching skill", False, "toolu_1"),
            ToolCall("Write", {"file_path": "notes/RELEASE.md"}, "denied", True, "toolu_2"),
            ToolCall("Read", {"file_path": "x"}, None, False, None),
        ],
        turns=3,
        input_tokens=3600,
        output_tokens=120,
        cost_usd=0.0168,
        duration_seconds=1.25,
        error="exit 1: Reached maximum number of turns (2)",
        trace_path=box.trace_file,
        files_created=box.created_files(),
        cwd=box.cwd,
        mock_calls=[MockCall("release", "tag", {"v": "1.4.1"}, "tagged", False)],
        delivered=True,
        latency_ms=980.0,
        notes=["not granted (add --eval-allow-tools): Bash"],
    )
    return transcript, box


def test_record_then_replay_gives_back_the_same_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording.layout, "MAX_KEPT_FILE", 1024)
    case = make_case(tmp_path)
    transcript, _ = made_run(tmp_path)
    results = tmp_path / "results"
    dest = run_folder(results / "runs", case, "with", 2)
    kept = record_run(dest, transcript, "claude")
    assert kept == str(dest / "trace.jsonl")
    meta = json.loads((dest / "meta.json").read_text(encoding="utf-8"))
    assert meta["agent"] == "claude"

    replay_box = Sandbox.create(tmp_path / "replay")
    agent = ReplayAgent.parse(str(results))
    again = agent.run(request_for(case, replay_box, "with", 2))

    ignore = {"trace_path", "cwd", "stderr_tail"}
    for field in dataclasses.fields(Transcript):
        if field.name not in ignore:
            assert getattr(again, field.name) == getattr(transcript, field.name), field.name
    assert again.cwd == replay_box.cwd
    assert again.trace_path == replay_box.trace_file
    assert again.trace_lines() == transcript.trace_lines()
    # Created files are back in the replay's cwd, byte for byte.
    assert (replay_box.cwd / "notes" / "RELEASE.md").read_text(encoding="utf-8") == "# 1.4.1\n"
    assert (replay_box.cwd / "café.txt").read_text(encoding="utf-8") == "é"


def test_files_over_the_size_cap_are_listed_but_not_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording.layout, "MAX_KEPT_FILE", 1024)
    transcript, _ = made_run(tmp_path)
    dest = tmp_path / "kept"
    record_run(dest, transcript, "claude")
    assert "big.bin" in json.loads((dest / "meta.json").read_text("utf-8"))["filesCreated"]
    assert not (dest / "files" / "big.bin").exists()
    assert (dest / "files" / "notes" / "RELEASE.md").exists()
    # At the cap exactly, the file is kept.
    monkeypatch.setattr(recording.layout, "MAX_KEPT_FILE", 2048)
    record_run(dest, transcript, "claude")
    assert (dest / "files" / "big.bin").stat().st_size == 2048


def test_recording_again_replaces_what_was_kept(tmp_path: Path) -> None:
    transcript, box = made_run(tmp_path)
    dest = tmp_path / "kept"
    record_run(dest, transcript, "claude")
    assert (dest / "trace.jsonl").exists()
    # A second session writes into the same folder: a run with no trace and other files.
    (box.cwd / "other.txt").write_text("o", encoding="utf-8")
    second = Transcript(final_message="second", files_created=["other.txt"], cwd=box.cwd)
    assert record_run(dest, second, "cmd") == ""
    assert not (dest / "trace.jsonl").exists()
    assert sorted(p.name for p in (dest / "files").iterdir()) == ["other.txt"]
    assert json.loads((dest / "meta.json").read_text("utf-8"))["finalMessage"] == "second"


def test_a_run_without_trace_or_cwd_is_recorded(tmp_path: Path) -> None:
    dest = tmp_path / "kept"
    failed = Transcript(error="could not start 'x'", infra_error="agent_start")
    assert record_run(dest, failed, "cmd") == ""
    assert not (dest / "files").exists()
    meta = json.loads((dest / "meta.json").read_text("utf-8"))
    assert meta["infraError"] == "agent_start" and meta["toolCalls"] == []


def test_a_failed_scaffold_stays_ungraded_on_replay(tmp_path: Path) -> None:
    case = make_case(tmp_path)
    results = tmp_path / "results"
    failed = Transcript(error="scaffold failed (exit 3): boom", skip_grading=True)
    record_run(run_folder(results / "runs", case, "single", 1), failed, "claude")
    box = Sandbox.create(tmp_path / "replay")
    again = ReplayAgent.parse(str(results)).run(request_for(case, box, "single", 1))
    assert again.skip_grading is True
    assert again.error == "scaffold failed (exit 3): boom"


def test_replay_of_a_missing_run_is_a_harness_error(tmp_path: Path) -> None:
    case = make_case(tmp_path)
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    box = Sandbox.create(tmp_path / "replay")
    again = ReplayAgent.parse(str(results)).run(request_for(case, box, "without", 3))
    assert again.infra_error == "harness"
    assert again.error == f"no recorded run for next [without-3] in {results.resolve()}"


def test_replay_of_an_unreadable_meta_is_a_harness_error(tmp_path: Path) -> None:
    case = make_case(tmp_path)
    results = tmp_path / "results"
    dest = run_folder(results / "runs", case, "with", 1)
    dest.mkdir(parents=True)
    (dest / "meta.json").write_text("{not json", encoding="utf-8")
    box = Sandbox.create(tmp_path / "replay")
    again = ReplayAgent.parse(str(results)).run(request_for(case, box))
    assert again.infra_error == "harness"
    assert again.error is not None
    assert again.error.startswith(f"the recorded run {dest / 'meta.json'} cannot be read: ")


def test_a_run_of_unknown_cost_replays_as_one(tmp_path: Path) -> None:
    case = make_case(tmp_path)
    results = tmp_path / "results"
    dest = run_folder(results / "runs", case, "with", 1)
    record_run(dest, Transcript(final_message="hi", cost_known=False), "opencode")
    assert json.loads((dest / "meta.json").read_text("utf-8"))["costUnknown"] is True
    again = ReplayAgent.parse(str(results)).run(request_for(case, Sandbox.create(tmp_path / "r")))
    assert again.final_message == "hi" and again.cost_known is False


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"turns": True}, "turns is not as a session writes it: Input should be a valid integer"),
        ({"costUsd": -1}, "costUsd is not as a session writes it: Input should be greater"),
        ({"toolCalls": [{"name": 3}]}, "toolCalls[0].name is not as a session writes it"),
        ({"notes": "a"}, "notes is not as a session writes it: Input should be a valid list"),
    ],
)
def test_replay_of_a_meta_of_the_wrong_shape_names_the_field(
    tmp_path: Path, meta: dict[str, object], field: str
) -> None:
    case = make_case(tmp_path)
    results = tmp_path / "results"
    dest = run_folder(results / "runs", case, "with", 1)
    dest.mkdir(parents=True)
    (dest / "meta.json").write_text(json.dumps({"finalMessage": "x", **meta}), encoding="utf-8")
    again = ReplayAgent.parse(str(results)).run(request_for(case, Sandbox.create(tmp_path / "r")))
    assert again.infra_error == "harness"
    assert again.error is not None and "\n" not in again.error
    assert again.error.startswith(f"the recorded run {dest / 'meta.json'} cannot be read: {field}")


def test_replay_needs_a_results_folder(tmp_path: Path) -> None:
    with pytest.raises(AgentError) as info:
        ReplayAgent.parse(str(tmp_path / "nope"))
    assert str(info.value) == (
        f"--eval-agent replay:{tmp_path / 'nope'}: no recorded runs there "
        "(expected a results folder holding runs/)"
    )


@pytest.mark.parametrize(
    ("source", "rel", "name", "readable"),
    [
        ("prose", "next", "next", "next"),
        ("case_yaml", "group/release notes", "named-in-yaml", "group-release-notes"),
        ("mixed", "next", "other-name", "next"),
        ("evals_json", "evals.json", "answers-something", "evals.json--answers-something"),
        ("sy", "suites/smoke.yaml", "greets", "suites-smoke.yaml--greets"),
        ("package_json", "package.json", "ok", "package.json--ok"),
    ],
)
def test_case_key_is_a_readable_slug_and_a_hash(
    tmp_path: Path, source: SourceKind, rel: str, name: str, readable: str
) -> None:
    key = case_key(make_case(tmp_path, name=name, source=source, rel=rel))
    slug, _, digest = key.rpartition("-")
    assert slug == readable
    assert len(digest) == 8 and all(c in "0123456789abcdef" for c in digest)


def test_case_keys_stay_apart_and_stable(tmp_path: Path) -> None:
    names = ["what's next?", "what's next!", "what-s-next", "a/b", "a b"]
    keys = [case_key(make_case(tmp_path, n, "evals_json", "evals.json")) for n in names]
    assert len(set(keys)) == len(keys)
    assert all(k.startswith("evals.json--") and "/" not in k for k in keys)
    # Stable from one session to the next (a replay finds the recording).
    assert keys == [case_key(make_case(tmp_path, n, "evals_json", "evals.json")) for n in names]
    # Case folders whose names differ only in punctuation get folders of their own.
    folders = ["a b", "a-b", "a?b"]
    keys = [case_key(make_case(tmp_path, f, "prose", f)) for f in folders]
    assert len(set(keys)) == 3 and all(k.startswith("a-b-") for k in keys)


def test_case_key_keeps_other_scripts_readable(tmp_path: Path) -> None:
    key = case_key(make_case(tmp_path, "été", "prose", "été"))
    assert key.startswith("été-")
    assert case_key(make_case(tmp_path, "日本", "prose", "日本")).startswith("日本-")
    assert case_key(make_case(tmp_path, "!!", "prose", "!!")).startswith("case-")


def test_case_key_outside_the_suite_root(tmp_path: Path) -> None:
    case = Case("x", "p", "evals_json", tmp_path / "elsewhere.json", tmp_path, tmp_path / "evals")
    assert case_key(case).startswith("elsewhere.json--x-")


def test_run_folder_layout(tmp_path: Path) -> None:
    case = make_case(tmp_path)
    runs = tmp_path / "results" / "runs"
    key = case_key(case)
    assert run_folder(runs, case, "with", 1) == runs / key / "with-1"
    assert run_folder(runs, case, "without", 3) == runs / key / "without-3"
    assert run_folder(runs, case, "single", 2) == runs / key / "single-2"


def test_a_runs_folder_holds_one_session(tmp_path: Path) -> None:
    runs = tmp_path / "out" / "runs"
    recording.claim_runs_folder(runs, "session-1")
    (runs / "old-case").mkdir()
    recording.claim_runs_folder(runs, "session-1")  # the same session: kept
    assert (runs / "old-case").is_dir()
    with pytest.raises(recording.FolderBusy, match="another pytest session"):
        recording.claim_runs_folder(runs, "session-2")  # session-1 still uses it
    assert (runs / "old-case").is_dir()
    recording.release_results_folders("session-1")  # session-1 ended
    recording.claim_runs_folder(runs, "session-2")  # another session: cleared first
    assert not (runs / "old-case").exists()
    assert (runs / ".pytest-plugin-evals-results").is_file()
    recording.release_results_folders("session-2")
    mine = tmp_path / "mine"
    (mine / "keep").mkdir(parents=True)
    recording.claim_runs_folder(mine, "session-3")  # not a runs folder of ours: left alone
    assert (mine / "keep").is_dir()
    recording.release_results_folders("session-3")


def test_replay_refuses_a_kept_name_no_session_stores(tmp_path: Path) -> None:
    """``...inert`` would be given back as ``..``: that run is refused, nothing is written."""
    case = make_case(tmp_path)
    transcript, _ = made_run(tmp_path)
    results = tmp_path / "results"
    dest = run_folder(results / "runs", case, "with", 1)
    record_run(dest, transcript, "claude")
    (dest / "files" / "...inert").mkdir()
    (dest / "files" / "...inert" / "escaped").write_text("x", encoding="utf-8")
    replay_box = Sandbox.create(tmp_path / "replay")
    again = ReplayAgent.parse(str(results)).run(request_for(case, replay_box, "with", 1))
    assert again.infra_error == "harness"
    assert again.error is not None and "files/...inert/escaped, a name no session" in again.error
    assert not (replay_box.home / "escaped").exists()
