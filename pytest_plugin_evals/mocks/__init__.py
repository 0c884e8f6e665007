"""MCP mocks: stand-in servers that answer a plugin's tool calls from Markdown files.

For one run::

    setup = prepare_mocks(case, plugin_dir, loads_plugin, run_dir)   # before the agent starts
    argv += setup.claude_args()            # --strict-mcp-config --mcp-config=<run_dir>/mcp.json
    allowed += setup.allowed_tools         # the mocked tools, granted
    ...                                    # run the agent in its own process group
    outcome = attach(setup, transcript)    # mock_calls, abort, totals

See :mod:`.discover` for which servers are mocked, shadowed or withheld, :mod:`.spec` for the
mock file format, :mod:`.server` for the stand-in process, :mod:`.host` for how stand-ins
start in milliseconds (one process per harness keeps the ``mcp`` SDK loaded and forks them) and
:mod:`.agent` for ``type: agent`` servers (a model plays them; answers recorded and replayed).
"""

from __future__ import annotations

from .agent import recordings_notice
from .calls import MockOutcome, abort_message, attach, collect_calls
from .config import MockSetup, judge_settings, load_plan, prepare_mocks
from .discover import MockPlan, MockServer, MockTool, declared_servers, discover_mocks
from .spec import MockSpec, parse_mock

__all__ = [
    "MockOutcome",
    "MockPlan",
    "MockServer",
    "MockSetup",
    "MockSpec",
    "MockTool",
    "abort_message",
    "attach",
    "collect_calls",
    "declared_servers",
    "discover_mocks",
    "judge_settings",
    "load_plan",
    "parse_mock",
    "prepare_mocks",
    "recordings_notice",
]
