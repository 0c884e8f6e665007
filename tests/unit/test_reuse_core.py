"""The core of ``--eval-reuse``: ages, fingerprints, stamps and the look-up of a recorded run
in an earlier results folder (hostile input: refused in one line, never followed)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.recording import META
from pytest_plugin_evals.reporting.document_check import DocumentError, check_document
from pytest_plugin_evals.reuse import (
    STAMP,
    Fingerprint,
    Found,
    Miss,
    case_part,
    holds_stamps,
    look_up,
    parse_age,
    write_stamp,
)
from pytest_plugin_evals.util.digests import tree_digest

NOW = 1_800_000_000.0
PRINT = Fingerprint({"case": "c1", "agent": "a1", "model": "m1"})
KEY = bytes(range(32))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("7d", 7 * 86400), ("12h", 43200), ("30m", 1800), ("90s", 90), ("2w", 1209600),
     ("1d12h", 129600), ("0.5h", 1800)],
)  # fmt: skip
def test_ages(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "soon", "3 days", "-1d", "0d", "1y", "1d x"])
def test_not_ages(text: str) -> None:
    with pytest.raises(ValueError):
        parse_age(text)


def case_in(folder: Path, **fields: object) -> Case:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompt.md").write_text("Say hi.")
    return Case(
        name="hi", prompt="Say hi.", source="prose", path=folder / "prompt.md", dir=folder,
        suite_root=folder.parent, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_case_part_covers_its_files_but_its_graders(tmp_path: Path) -> None:
    case = case_in(tmp_path / "evals" / "hi")
    first = case_part(case)
    (case.dir / "graders").mkdir()
    (case.dir / "graders" / "a.md").write_text("---\ntype: regex\npattern: x\n---\n")
    assert case_part(case) == first
    (case.dir / "fixture.txt").write_text("data")
    second = case_part(case)
    assert second != first
    (case.dir / "fixture.txt").write_text("other data")
    assert case_part(case) != second
    assert case_part(case_in(case.dir, max_turns=3)) != case_part(case)


def test_a_link_in_a_tree_is_its_target_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("one")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)
    before = tree_digest(tree)
    outside.write_text("two")
    assert tree_digest(tree) == before


def recorded(source: Path, name: str = "without-1", **meta: object) -> Path:
    run = source / "runs" / "hi-1234" / name
    run.mkdir(parents=True)
    doc = {"agent": "cmd", "finalMessage": "hi", "costUsd": 0.01, "infraError": None, **meta}
    (run / META).write_text(json.dumps(doc))
    write_stamp(run, PRINT, NOW - 60, str(source), KEY)
    return run


def test_an_equal_fingerprint_is_found(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    found = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY)
    assert isinstance(found, Found) and found.stamp.made_at == NOW - 60


def test_what_changed_is_named(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    other = Fingerprint({**PRINT.parts, "model": "m2"})
    assert look_up(tmp_path, run, other, max_age=3600, now=NOW, key=KEY) == Miss("changed", "model")
    assert look_up(tmp_path, run, PRINT, max_age=30, now=NOW, key=KEY) == Miss("old")
    missing = tmp_path / "runs" / "hi-1234" / "without-2"
    assert look_up(tmp_path, missing, PRINT, max_age=3600, now=NOW, key=KEY) == Miss("absent")


@pytest.mark.parametrize(
    ("stamp", "message"),
    [
        ("[]", "reuse.json is not a JSON object: refused"),
        ("{", "reuse.json is not JSON"),
        ('{"fingerprint": "ab", "parts": {}, "madeAt": 1, "origin": ""}', "not a SHA-256"),
        (None, "madeAt is not a number: refused"),
        ("x" * 70_000, "reuse.json is larger than 64 KB: refused"),
    ],
)
def test_a_tampered_stamp_is_refused(tmp_path: Path, stamp: str | None, message: str) -> None:
    run = recorded(tmp_path)
    if stamp is None:
        doc = json.loads((run / STAMP).read_text())
        stamp = json.dumps({**doc, "madeAt": True})
    (run / STAMP).write_text(stamp)
    miss = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY)
    assert isinstance(miss, Miss) and miss.kind == "refused" and message in miss.detail
    assert miss.detail.startswith("the recorded run runs/hi-1234/without-1")
    assert "\n" not in miss.detail


def test_links_out_and_wrong_types_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s")
    linked = recorded(tmp_path / "a")
    (linked / STAMP).unlink()
    (linked / STAMP).symlink_to(secret)
    miss = look_up(tmp_path / "a", linked, PRINT, max_age=3600, now=NOW, key=KEY)
    assert isinstance(miss, Miss) and miss.kind == "refused" and "symbolic link" in miss.detail
    typed = recorded(tmp_path / "b", turns="many")
    miss = look_up(tmp_path / "b", typed, PRINT, max_age=3600, now=NOW, key=KEY)
    assert miss == Miss("refused", "the recorded run runs/hi-1234/without-1: turns is not as a "
                        "session writes it: Input should be a valid integer")  # fmt: skip
    failed = recorded(tmp_path / "c", infraError="rate_limit")
    miss = look_up(tmp_path / "c", failed, PRINT, max_age=3600, now=NOW, key=KEY)
    assert isinstance(miss, Miss) and miss.kind == "failed"
    runs_link = tmp_path / "d"
    (runs_link).mkdir()
    (runs_link / "runs").symlink_to(tmp_path / "a" / "runs")
    miss = look_up(runs_link, runs_link / "runs" / "hi-1234" / "without-1", PRINT,
                   max_age=3600, now=NOW, key=KEY)  # fmt: skip
    assert isinstance(miss, Miss) and miss.kind == "refused"


def test_a_huge_meta_is_not_read(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    with (run / META).open("r+b") as fh:
        fh.truncate(17 * 2**20)
    miss = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY)
    assert isinstance(miss, Miss) and "larger than 16 MB" in miss.detail


def test_a_folder_holds_stamped_runs_or_not(tmp_path: Path) -> None:
    """What ``--eval-reuse last`` asks of a session of its kind's folder (which session is of
    its kind: ``reporting.earlier``, tests/integration/test_compare_last.py)."""
    results = tmp_path / "results"
    stamped = results / "s1"
    recorded(stamped)
    (results / "s4" / "runs").mkdir(parents=True)  # a replay's: nothing stamped
    (results / "s5").symlink_to(stamped)
    assert holds_stamps(stamped)
    assert not holds_stamps(results / "s4")
    assert not holds_stamps(results / "s5")
    assert not holds_stamps(tmp_path / "nowhere")


def test_the_document_reader_knows_reused_from() -> None:
    run = {"arm": "without", "run": 1, "reusedFrom": "/earlier"}
    check_document({"schemaVersion": 1, "cases": [{"arms": {"without": [run]}}]}, 1)
    with pytest.raises(DocumentError, match=r"reusedFrom"):
        check_document(
            {"schemaVersion": 1, "cases": [{"arms": {"without": [{"reusedFrom": 3}]}}]}, 1
        )


def forge(run: Path, **fields: object) -> None:
    """Change a stamp the way one without the key can: its fields, and its unkeyed digests
    made again (the fingerprint and the files' digest, as they would be)."""
    from pytest_plugin_evals.reuse import run_digest

    doc = json.loads((run / STAMP).read_text())
    doc.update(fields, files=run_digest(run))
    doc["mac"] = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    (run / STAMP).write_text(json.dumps(doc))


@pytest.mark.parametrize("what", ["meta", "trace", "kept file", "age", "fingerprint"])
def test_a_stamp_or_run_altered_without_the_key_is_refused(tmp_path: Path, what: str) -> None:
    run = recorded(tmp_path)
    (run / "trace.jsonl").write_text('{"type":"assistant","text":"hi"}\n')
    (run / "files").mkdir()
    (run / "files" / "out.txt").write_text("made")
    write_stamp(run, PRINT, NOW - 60, str(tmp_path), KEY)
    assert isinstance(look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY), Found)
    if what == "meta":
        doc = json.loads((run / META).read_text())
        (run / META).write_text(json.dumps({**doc, "finalMessage": "all done, PASS"}))
    elif what == "trace":
        (run / "trace.jsonl").write_text('{"type":"assistant","text":"forged"}\n')
    elif what == "kept file":
        (run / "files" / "out.txt").write_text("forged")
    miss = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY)
    if what in ("meta", "trace", "kept file"):
        assert miss == Miss(
            "refused",
            "the recorded run runs/hi-1234/without-1 has files (meta.json, trace, kept files) "
            "changed since it was stamped: refused",
        )
    forge(run, madeAt=NOW - 1) if what == "age" else forge(run)
    if what == "fingerprint":
        forge(run, fingerprint=Fingerprint({"case": "other"}).value, parts={"case": "other"})
    miss = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY)
    assert miss == Miss(
        "refused",
        "the recorded run runs/hi-1234/without-1 has a reuse.json not signed with this "
        "machine's stamp key (altered, or stamped with another key): refused",
    )


def test_another_key_and_an_unsigned_stamp_are_refused(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    miss = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=b"k" * 32)
    assert isinstance(miss, Miss) and "not signed with this machine's stamp key" in miss.detail
    doc = json.loads((run / STAMP).read_text())
    del doc["mac"]
    (run / STAMP).write_text(json.dumps(doc))  # a stamp of the unkeyed kind
    miss = look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY)
    assert isinstance(miss, Miss) and miss.kind == "refused"
    assert "it is not signed (no files digest and signature): refused" in miss.detail


def test_the_stamp_key_is_made_once_private_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_plugin_evals.util.stampkey import StampKeyError, key_file, load_stamp_key

    env = {"HOME": str(tmp_path / "home")}
    path = key_file(env)
    assert path == tmp_path / "home" / ".local" / "state" / "pytest-plugin-evals" / "stamp-key"
    key = load_stamp_key(env)
    assert len(key) == 32 and load_stamp_key(env) == key
    assert (os.stat(path).st_mode & 0o777, os.stat(path.parent).st_mode & 0o777) == (0o600, 0o700)
    assert os.listdir(path.parent) == ["stamp-key"]
    state = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": env["HOME"]}
    assert load_stamp_key(state) != key  # its own place
    os.chmod(path, 0o644)
    with pytest.raises(StampKeyError, match="can be read by others"):
        load_stamp_key(env)
    path.unlink()
    path.symlink_to(key_file(state))
    with pytest.raises(StampKeyError, match="stamp-key"):
        load_stamp_key(env)
    assert load_stamp_key({**env, "EVAL_STAMP_KEY": "s" * 40}) == b"s" * 40
    with pytest.raises(StampKeyError, match="shorter than 32"):
        load_stamp_key({**env, "EVAL_STAMP_KEY": "short"})


def test_the_stamp_key_is_never_passed_into_a_run() -> None:
    from pytest_plugin_evals.util.environment import allowed_environment
    from pytest_plugin_evals.util.redact import secrets_in

    env = {"EVAL_STAMP_KEY": "s" * 40, "EVAL_OTHER": "1"}
    assert allowed_environment(env, extra=["EVAL_STAMP_KEY"]) == {"EVAL_OTHER": "1"}
    assert "EVAL_STAMP_KEY" in secrets_in(env)


def test_a_stamp_is_signed_as_it_is_written(tmp_path: Path) -> None:
    """A whole-number time and a path that is not UTF-8 read back as they were signed."""
    run = tmp_path / "runs" / "hi-1234" / "without-1"
    run.mkdir(parents=True)
    (run / META).write_text(json.dumps({"agent": "cmd", "finalMessage": "hi", "infraError": None}))
    write_stamp(run, PRINT, 1_799_999_940, os.fsdecode(b"/tmp/r\xff"), KEY)
    assert isinstance(look_up(tmp_path, run, PRINT, max_age=3600, now=NOW, key=KEY), Found)
