"""What a run created is kept in the results folder as regular files of one name: a hard link
among the files it made is kept (each name a file of its own), a hard link to a file it did not
make (of the plugin, the project, the system) is not."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest

from tests.helpers import write_tree

#: Makes a file and a second name of it, and a second name of a file it did not make.
AGENT = """\
import os, sys
sys.stdin.read()
with open("own.txt", "w") as fh:
    fh.write("made by the run\\n")
os.link("own.txt", "own-too.txt")
os.makedirs("notes")
os.link(sys.argv[1], os.path.join("notes", "secret.txt"))
print("hi")
"""


def test_hard_links_to_files_the_run_did_not_make_are_not_kept(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    write_tree(
        pytester.path,
        {
            "evals/links/prompt.md": "---\nruns: 1\n---\nSay hi\n",
            "evals/links/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
            "outside/secret.txt": "hunter2\n",
            "agent.py": AGENT,
        },
    )
    secret = pytester.path / "outside" / "secret.txt"
    agent = "cmd:" + shlex.join([sys.executable, str(pytester.path / "agent.py"), str(secret)])
    # A link across the sandbox's mounts cannot be made: unconfined, the run reaches the file.
    result = pytester.runpytest(
        "evals", *plugin_args, f"--eval-agent={agent}", "--eval-unconfined",
        "--eval-output-dir=rec", "--eval-json=out.json",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    run = read_doc("out.json")["cases"][0]["arms"]["with"][0]
    assert run["filesCreated"] == ["notes/secret.txt", "own-too.txt", "own.txt"]
    (files,) = (pytester.path / "rec" / "runs").glob("*/*/files")
    kept = sorted(p.relative_to(files).as_posix() for p in files.rglob("*") if p.is_file())
    assert kept == ["own-too.txt", "own.txt"]
    for name in kept:  # each a file of its own, with what the run wrote
        assert (files / name).stat().st_nlink == 1
        assert (files / name).read_text(encoding="utf-8") == "made by the run\n"
    assert "hunter2" not in json.dumps(read_doc("out.json"))
    assert secret.read_text(encoding="utf-8") == "hunter2\n"
