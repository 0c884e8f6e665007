"""``python -m pytest_plugin_evals merge`` reads shards' folders only as written: a link among the
recorded runs, a malformed document, a relabelled shard are one line and exit status 4, and a
shard's oversized answers and traces are kept within a session's caps."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_command, write_tree

DOCUMENT = "aggregate-result.json"
CASES = ("alpha", "beta", "gamma", "delta")

RULES = [
    {
        "match": "Task",
        "reply": "ok",
        "tool_calls": [{"name": "Read", "input": {"file_path": "notes/a.md"}}],
        "files": {"notes/a.md": "# notes\n"},
    }
]


#: The scripted agent the shards' sessions run (tests/agents/scripted_agent.py).
AGENT = Path(__file__).parents[1] / "agents" / "scripted_agent.py"


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shards 1 and 2 of a suite split three ways, each run once for the module as its own
    session (shard 3 is never run: the tests forge it), under ``made/``; each test merges a
    copy of them (:func:`given`)."""
    root = tmp_path_factory.mktemp("shards")
    for name in CASES:
        write_tree(
            root,
            {
                f"evals/{name}/prompt.md": f"---\nruns: 1\n---\nTask {name}\n",
                f"evals/{name}/graders/ok.md": "---\ntype: regex\npattern: ok\n---\n",
            },
        )
    (root / "agent-rules.json").write_text(json.dumps(RULES), encoding="utf-8")
    agent = "cmd:" + shlex.join([sys.executable, str(AGENT), str(root / "agent-rules.json")])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EVAL_"))}
    env["HOME"] = str(tmp_path_factory.mktemp("home"))
    for k in (1, 2):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "evals", "-n0", "-p", "no:cacheprovider",
             "--eval-agent", agent, "--eval-shard", f"{k}/3", "--eval-threshold", "0",
             "--eval-output-dir", f"made/shard-{k}"],
            cwd=root, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    return root / "made"


def given(shards: Path, where: Path) -> tuple[Path, Path]:
    """A fresh copy of the two shards' folders (links kept as links) under ``where``."""
    shutil.copytree(shards, where, symlinks=True)
    return where / "shard-1", where / "shard-2"


def doc(folder: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((folder / DOCUMENT).read_text(encoding="utf-8"))
    return loaded


def put(folder: Path, document: dict[str, Any]) -> None:
    (folder / DOCUMENT).write_text(json.dumps(document), encoding="utf-8")


def a_run(folder: Path) -> tuple[str, Path]:
    """A recorded run of the shard: its case key and its folder."""
    case = doc(folder)["cases"][0]
    trace = Path(case["arms"]["with"][0]["tracePath"])  # where the shard's session kept it
    key, run = trace.parent.parent.name, trace.parent.name
    return key, folder / "runs" / key / run


def merge(pytester: pytest.Pytester, *folders: Path, out: str = "merged") -> pytest.RunResult:
    """``python -m pytest_plugin_evals merge`` of ``folders`` into ``out``, run in this
    process."""
    return run_command(
        pytester.path, "merge", *map(str, folders), "--output-dir", out, "--threshold", "0"
    )


def refused(pytester: pytest.Pytester, *folders: Path) -> str:
    """The one line a refused merge says; nothing was written."""
    result = merge(pytester, *folders, out="refused")
    assert result.ret == 4, (result.stdout.str(), result.stderr.str())
    assert len(result.errlines) == 1, result.errlines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "refused" / DOCUMENT).exists()
    assert not (pytester.path / "refused" / "runs").exists()
    line: str = result.errlines[0]
    return line


def test_the_shards_as_written_merge(pytester: pytest.Pytester, shards: Path) -> None:
    one, two = given(shards, pytester.path / "ok")
    result = merge(pytester, one, two)
    assert result.ret == 2  # shard 3/3 was not given: partial
    assert "merged 2 of 3 shard(s)" in result.stdout.str()
    merged = doc(pytester.path / "merged")
    traces = [r["tracePath"] for c in merged["cases"] for r in c["arms"]["with"]]
    assert traces and all(Path(t).is_file() for t in traces)
    assert all(Path(t).is_relative_to(pytester.path / "merged" / "runs") for t in traces)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and FIFOs")
@pytest.mark.parametrize(
    "tamper",
    ["files-link", "trace-link", "case-folder-link", "runs-link", "hard-link", "fifo", "doc-link"],
)
def test_a_link_among_a_shards_runs_is_refused(
    pytester: pytest.Pytester, shards: Path, tamper: str
) -> None:
    one, two = given(shards, pytester.path / "tampered")
    key, run = a_run(one)
    outside = pytester.path / "secret.txt"
    outside.write_text("not the shard's\n", encoding="utf-8")
    if tamper == "files-link":
        link = run / "files" / "notes"
        shutil.rmtree(link)
        link.symlink_to("/etc")
        expected = f"merge: {link}: a symbolic link (→ /etc): refused"
    elif tamper == "trace-link":
        link = run / "trace.jsonl"
        link.unlink()
        link.symlink_to(outside)
        expected = f"merge: {link}: a symbolic link (→ {outside}): refused"
    elif tamper == "case-folder-link":
        link = one / "runs" / key
        moved = pytester.path / "elsewhere"
        link.rename(moved)
        link.symlink_to(moved)
        expected = f"merge: {link}: a symbolic link (→ {moved}): refused"
    elif tamper == "runs-link":
        link = one / "runs"
        moved = pytester.path / "elsewhere"
        link.rename(moved)
        link.symlink_to(moved)
        expected = f"merge: {link}: a symbolic link (→ {moved}): refused"
    elif tamper == "hard-link":
        name = run / "files" / "notes" / "a.md"
        name.unlink()
        os.link(outside, name)
        expected = f"merge: {name}: a hard-linked file (2 names): refused"
    elif tamper == "fifo":
        name = run / "files" / "pipe"
        os.mkfifo(name)
        expected = f"merge: {name}: not a regular file (a FIFO): refused"
    else:
        link = one / DOCUMENT
        moved = pytester.path / "document.json"
        link.rename(moved)
        link.symlink_to(moved)
        expected = f"merge: {link}: a symbolic link (→ {moved}): refused"
    assert refused(pytester, one, two) == expected


def _with_run(document: dict[str, Any]) -> dict[str, Any]:
    run: dict[str, Any] = document["cases"][0]["arms"]["with"][0]
    return run


MALFORMED: dict[str, tuple[Callable[[str], str], str]] = {
    "not-json": (lambda text: text[:-20], "not JSON: *(at line *, column *)"),
    "nan": (
        lambda text: re.sub(r'"costUsd": [0-9.e-]+', '"costUsd": NaN', text, count=1),
        "a number JSON cannot hold: NaN (at $.costUsd)",
    ),
    "infinity": (
        lambda text: text.replace('"durationSeconds": ', '"durationSeconds": -Infinity, "x": ', 1),
        "a number JSON cannot hold: -Infinity (at $.durationSeconds)",
    ),
    "huge-int": (
        lambda text: text.replace('"runsTotal": ', '"runsTotal": 1' + "0" * 400 + ', "x": ', 1),
        "a number JSON cannot hold: an integer of 401 digits (at $.aggregates.runsTotal)",
    ),
    "huge-float": (
        lambda text: text.replace('"turns": ', '"turns": 1e400, "x": ', 1),
        "a number JSON cannot hold: 1e400 (at $.cases[0].arms.with[0].turns)",
    ),
    "not-an-object": (
        lambda text: "[1, 2]",
        "not a result document: expected an object, found a list",
    ),
    "wrong-type": (
        lambda text: text.replace('"graders": [', '"graders": "x", "was": [', 1),
        "expected a list or null, found a string (at $.cases[0].graders)",
    ),
    "wrong-type-deep": (
        lambda text: text.replace('"answer": "ok"', '"answer": ["ok"]', 1),
        "expected a string or null, found a list (at $.cases[0].arms.with[0].answer)",
    ),
    "score": (
        lambda text: re.sub(r'"score": [0-9.]+', '"score": 1e300', text, count=1),
        "expected a number from 0 to 1 or null, found 1e+300 (at $.cases[0].arms.with[0].score)",
    ),
    "counts": (
        lambda text: text.replace('"errors": {}', '"errors": {"judge": "two"}', 1),
        "expected a number, found a string (at $.errors.judge)",
    ),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_shard_document_is_one_line(
    pytester: pytest.Pytester, shards: Path, kind: str
) -> None:
    one, two = given(shards, pytester.path / "tampered")
    edit, what = MALFORMED[kind]
    path = one / DOCUMENT
    text = path.read_text(encoding="utf-8")
    edited = edit(text)
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    line = refused(pytester, one, two)
    pattern = f"merge: {path}: {what}"
    assert fnmatch.fnmatch(line, pattern.replace("[", "[[]")), line


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (lambda d: d["shard"].update(index=0), "shard 0 of 3: not one of them (at $.shard.index)"),
        (
            lambda d: d["shard"].update(total=10**9),
            "a split into 1000000000 shards (1 to 10,000 are read) (at $.shard.total)",
        ),
        (
            lambda d: d["shard"]["suiteCases"][1].update(key="../../etc"),
            "the case key '../../etc' is not a folder name of its own "
            "(at $.shard.suiteCases[1].key)",
        ),
        (
            lambda d: d["shard"]["suiteCases"][2].update(shard=7),
            "the case '*' goes to shard 7 of 3 (at $.shard.suiteCases[2])",
        ),
    ],
    ids=["index", "total", "key", "case-shard"],
)
def test_a_split_no_session_makes_is_refused(
    pytester: pytest.Pytester, shards: Path, edit: Callable[[dict[str, Any]], None], what: str
) -> None:
    one, two = given(shards, pytester.path / "tampered")
    document = doc(one)
    edit(document)
    put(one, document)
    line = refused(pytester, one, two)
    assert fnmatch.fnmatch(line, f"merge: {one / DOCUMENT}: {what}".replace("[", "[[]")), line


def test_a_relabelled_shard_is_refused(pytester: pytest.Pytester, shards: Path) -> None:
    one, two = given(shards, pytester.path / "tampered")
    # A copy of shard 2's folder that says it is shard 3: today it "merges 3 of 3".
    three = pytester.path / "tampered" / "shard-3"
    shutil.copytree(two, three)
    document = doc(three)
    document["shard"]["index"] = 3
    put(three, document)
    name = doc(two)["cases"][0]["name"]
    assert refused(pytester, one, two, three) == (
        f"merge: cannot merge: the case {name!r} is in shard 2/3 ({two}) and in shard 3/3 ({three})"
    )
    assert refused(pytester, one, three) == (
        f"merge: cannot merge: shard 3/3 ({three}) holds the case {name!r}, which its split "
        "gives to shard 2/3 (was the document relabelled?)"
    )
    # A shard whose document lost a case it ran (and skipped none).
    document = doc(one)
    lost = document["cases"].pop()
    put(one, document)
    assert refused(pytester, one, two) == (
        f"merge: cannot merge: shard 1/3 ({one}) lacks 1 of the {len(document['cases']) + 1} "
        f"case(s) its split gives it ({lost['name']}): it neither ran nor skipped them"
    )


def test_a_merge_keeps_a_shards_runs_within_a_sessions_caps(
    pytester: pytest.Pytester, shards: Path
) -> None:
    one, two = given(shards, pytester.path / "plain")
    assert merge(pytester, one, two, out="plain-merged").ret == 2
    plain_report = (pytester.path / "plain-merged" / "report.html").stat().st_size
    one, two = given(shards, pytester.path / "big")
    document = doc(one)
    run = _with_run(document)
    run["answer"] = "A" * (20 << 20)  # a session keeps 4,000 characters of an answer
    run["toolCallList"] = [{"name": "Read", "input": "x" * 10_000, "isError": False}] * 500
    put(one, document)
    key, folder = a_run(one)
    with (folder / "trace.jsonl").open("a", encoding="utf-8") as fh:
        for _ in range(30):  # 30 MB of events: a session keeps about 10 MB of a trace
            fh.write(json.dumps({"type": "note", "text": "t" * (1 << 19)}) + "\n")
    big = folder / "files" / "big.bin"
    big.write_bytes(b"\0" * (11 << 20))  # a session does not keep a created file past 10 MB
    result = merge(pytester, one, two, out="big-merged")
    assert result.ret == 2, result.stderr.str()
    out = pytester.path / "big-merged"
    merged = doc(out)
    again = next(c for c in merged["cases"] if c["name"] == document["cases"][0]["name"])
    kept = again["arms"]["with"][0]
    assert len(kept["answer"]) == 4000 and kept["answerTruncated"] is True
    assert len(kept["toolCallList"]) == 50
    assert all(len(c["input"]) == 300 for c in kept["toolCallList"])
    assert (out / DOCUMENT).stat().st_size < 1 << 20
    assert (out / "report.html").stat().st_size < plain_report + (1 << 20)
    kept_trace = Path(kept["tracePath"])
    assert kept_trace.is_relative_to(out / "runs")
    assert kept_trace.stat().st_size < 11 << 20
    assert not (out / "runs" / key / folder.name / "files" / "big.bin").exists()
    assert (out / "runs" / key / folder.name / "files" / "notes" / "a.md").is_file()
    notes = [line for line in result.outlines if line.startswith("merge: ")]
    assert any("trace.jsonl: output of" in line for line in notes), notes
    assert any("big.bin: larger than a session keeps (10 MB): not copied" in line for line in notes)


def test_a_merge_keeps_what_a_shard_holds_inert(pytester: pytest.Pytester, shards: Path) -> None:
    """A shard's folder that holds a ``.git`` pointer or a bare repository's ``HEAD`` (a
    tampered artifact) is merged with those stored as a session stores them."""
    one, two = given(shards, pytester.path / "raw")
    _, run = a_run(one)
    write_tree(
        run / "files",
        {"work/.git": "gitdir: ../evil\n", "bare/HEAD": "ref: refs/heads/main\n", "x.inert": ""},
    )
    result = merge(pytester, one, two)
    assert result.ret == 2, result.stderr.str()
    merged = pytester.path / "merged" / "runs" / run.parent.name / run.name / "files"
    kept = sorted(p.relative_to(merged).as_posix() for p in merged.rglob("*") if p.is_file())
    assert kept == ["bare/HEAD.inert", "notes/a.md", "work/.git.inert", "x.inert"]
