"""The tracker-kit plugin the agent CLIs' MCP end-to-end tests share: its tools' Claude Code
names, the ``create_issue`` mock, the ``files-bug`` case, and a real MCP server in the
standard library (a plugin's server runs inside a confined CLI, which shows the tools on
``PATH``, not the tests' virtualenv)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

CREATE = "mcp__plugin_tracker-kit_tracker__create_issue"
SEARCH = "mcp__kb__search"
LOOKUP = "mcp__plugin_tracker-kit_people__lookup"

#: The tracker's ``create_issue`` mock, with an ``expect:`` guard.
CREATE_MD = """---
expect:
  title: string
  priority: [low, medium, high]
---

Created issue #4821: {{input.title}}
"""

#: A stdio MCP server (standard library only) named by its first argument: it leaves
#: ``real-<name>-started`` in its working folder (the run's) and serves ``lookup`` and
#: ``delete_person``, answering ``alice is on call (real)``.
PEOPLE_SERVER = r"""
import json, sys
open(f"real-{sys.argv[1]}-started", "w").close()
TOOLS = [{"name": n, "description": n + " a person", "inputSchema": {"type": "object"}}
         for n in ("lookup", "delete_person")]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), {}
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities":
                  {"tools": {}}, "serverInfo": {"name": sys.argv[1], "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "alice is on call (real)"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def people_server(name: str) -> dict[str, Any]:
    """The plugin's server ``name``: :data:`PEOPLE_SERVER`, saved as ``real_server.py`` in the
    plugin's folder, run by python3."""
    return {"command": "python3", "args": ["${CLAUDE_PLUGIN_ROOT}/real_server.py", name]}


def files_bug(front: str = "") -> dict[str, str]:
    """The ``files-bug`` case (for ``pytester.makefile(".md", **…)``): file a bug, graded on the
    tracker's mock call and the answer; ``front`` adds front-matter lines."""
    return {
        "evals/files-bug/prompt": (
            f"---\nruns: 1\n{front}---\nFile a bug: the app crashes on start.\n"
        ),
        "evals/files-bug/graders/created": (
            "---\ntype: regex\npattern: 'create_issue.*Crash on start'\ntarget: mock_calls\n---\n"
        ),
        "evals/files-bug/graders/answer": "---\ntype: regex\npattern: '#4821'\n---\n",
    }


def marker_server(name: str) -> dict[str, Any]:
    """A "real" server that leaves ``real-<name>-started`` in its working folder (the run's),
    then fails."""
    return {"command": "sh", "args": ["-c", f"touch real-{name}-started; exit 1"]}


def make_tracker(
    pytester: pytest.Pytester,
    *,
    server: Callable[[str], dict[str, Any]] = marker_server,
    people: dict[str, Any] | None = None,
) -> None:
    """tracker-kit 0.3.0: its "real" servers ``people`` and ``wiki`` (in its manifest) and
    ``tracker`` (in ``.mcp.json``), each ``server(name)`` (:func:`marker_server`, or
    :func:`people_server`: :data:`PEOPLE_SERVER` is saved beside them), the mocks of
    ``create_issue``, ``kb``'s ``search`` and, unless ``people`` replaces that server,
    ``people``'s ``lookup``, and the ``files-bug`` case."""
    if server is people_server or people is not None:
        pytester.makefile(".py", real_server=PEOPLE_SERVER)
    manifest = {
        "name": "tracker-kit",
        "version": "0.3.0",
        "mcpServers": {"people": people or server("people"), "wiki": server("wiki")},
    }
    pytester.makefile(".json", **{".claude-plugin/plugin": json.dumps(manifest)})
    pytester.makefile(
        ".json", **{".mcp": json.dumps({"mcpServers": {"tracker": server("tracker")}})}
    )
    pytester.makefile(
        ".md",
        **{
            "evals/mocks/tracker/create_issue": CREATE_MD,
            "evals/mocks/kb/search": "Found 1 page for {{input.q}}",
            **files_bug(),
        },
    )
    if people is None:
        pytester.makefile(".md", **{"evals/mocks/people/lookup": "alice is on call"})


def markers(run: dict[str, Any]) -> set[str]:
    """The ``real-<name>-started`` files a run's "real" servers left (which of them started)."""
    return {f.rsplit("/", 1)[-1] for f in run["filesCreated"] if "-started" in f}
