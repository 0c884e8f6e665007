"""``init`` and a judged case offline, from the docs alone: the rules file and the commands of
docs/reference/scripted-model.md ("Offline init and judges") are read from the page and run as
written — the scripted model served from the command line, ``init`` drafting with the real
``claude`` judge and piloting with the real ``claude`` agent, then ``pytest evals/`` with the
``openai`` judge against the same server."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reference" / "scripted-model.md"
SHIPPED = ROOT / "examples" / "scripted-rules" / "judge-and-init.yaml"
EXAMPLE = ROOT / "examples" / "release-helper"
SECTION = "## Offline `init` and judges"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def block(kind: str) -> str:
    found = re.search(rf"^```{kind}\n(.*?)^```", section(), re.MULTILINE | re.DOTALL)
    assert found, f"no {kind} block in the section"
    return found.group(1)


def commands() -> list[list[str]]:
    return [shlex.split(line[2:]) for line in block("console").splitlines() if line[:2] == "$ "]


def test_the_docs_rules_file_is_the_shipped_one() -> None:
    assert block("yaml") == SHIPPED.read_text(encoding="utf-8")


def test_init_and_a_judged_case_run_offline_from_the_docs_alone(
    tmp_path: Path, claude_bin: str
) -> None:
    plugin = tmp_path / "release-helper"
    for name in (".claude-plugin", "skills", "commands"):
        shutil.copytree(EXAMPLE / name, plugin / name)
    (plugin / "judge-and-init.yaml").write_text(block("yaml"), encoding="utf-8")
    serve, *exports, init, run = commands()
    assert serve[:3] == ["python", "-m", "pytest_plugin_evals.testing"] and serve[-1] == "&"
    assert [c[0] for c in exports] == ["export", "export"]
    home = tmp_path / "home"
    home.mkdir()
    path = f"{Path(claude_bin).parent}{os.pathsep}{os.environ['PATH']}"  # `claude` on PATH
    env = {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8"}
    served = [sys.executable, *serve[1:-1]]
    served[served.index("--port") + 1] = "0"  # any free port: the first line says which
    server = subprocess.Popen(
        served, cwd=plugin, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        port = re.search(r"http://127\.0\.0\.1:(\d+)", first)
        assert port, first + server.stderr.read() if server.stderr else first
        for export in exports:
            for word in export[1:]:
                key, _, value = word.partition("=")
                env[key] = value.replace("8765", port.group(1))
        assert init[:3] == ["python", "-m", "pytest_plugin_evals"]
        drafted = subprocess.run(
            [sys.executable, *init[1:]], cwd=plugin, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert drafted.returncode == 0, drafted.stdout + drafted.stderr
        assert "init: drafting with the claude judge" in drafted.stdout
        assert "init: skill next-version: wrote 2 case(s)" in drafted.stdout
        assert "init: pilot: 2 of 2 case(s) passed" in drafted.stdout, drafted.stdout
        assert run[0] == "pytest"
        # One run per case and arm (the cases' own three would judge the same answers).
        judged = subprocess.run(
            [sys.executable, "-m", "pytest", *run[1:], "-p", "no:cacheprovider",
             "--eval-runs", "1", "--eval-json", str(tmp_path / "out.json")],
            cwd=plugin, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert judged.returncode == 0, judged.stdout[-4000:] + judged.stderr[-2000:]
    finally:
        server.terminate()
        server.communicate(timeout=30)  # waits, and closes its pipes
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert sorted(c["name"] for c in doc["cases"]) == [
        "next-version-asks-for-it",
        "next-version-unrelated-question",
    ]
    verdicts = [
        g
        for case in doc["cases"]
        for runs in case["arms"].values()
        for one in runs
        for g in one["graders"]
        if g["name"] == "outcome"
    ]
    votes = [[v["vote"] for v in g["judgeVotes"]] for g in verdicts]
    assert len(votes) == 4, votes  # two cases, two arms, one run each
    assert all(v == ["PASS"] * 3 for v in votes), votes
