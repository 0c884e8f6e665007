"""MCP mocks: stand-in servers that answer a plugin's tool calls from Markdown files.

For one run::

    setup = prepare_mocks(case, plugin_dir, loads_plugin, run_dir, run_token=token)  # before
    argv += setup.claude_args()            # --strict-mcp-config --mcp-config=<run_dir>/mcp.json
    allowed += setup.allowed_tools         # the mocked tools, granted
    env.update(setup.environment())        # the run's token: what an expect: abort kills
    ...                                    # run the agent in its own process group
    setup.close()                          # the run's socket on the mock host goes
    outcome = attach(setup, transcript)    # mock_calls, abort, totals, what the host refused

See :mod:`.discover` for which servers are mocked, shadowed or withheld (and the case's plan,
read at collection), :mod:`.spec` for the mock file format, :mod:`.config` for one run's setup,
:mod:`.server` for the stand-in process, :mod:`.host` for how stand-ins start in milliseconds
(one process per harness keeps the ``mcp`` SDK loaded and forks them, trusting only what the
harness registered for each run) and :mod:`.agent` for
``type: agent`` servers (a model plays them; answers recorded and replayed).

The names below are imported from their modules on first use, so reading a case's mock plan at
collection loads neither the SDK nor the fork server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_plugin_evals.util.lazy import lazy_exports

if TYPE_CHECKING:  # the same names, typed, for type checkers
    from .calls import MockOutcome as MockOutcome
    from .calls import attach as attach
    from .calls import collect_calls as collect_calls
    from .config import MockJudge as MockJudge
    from .config import MockOptions as MockOptions
    from .config import MockSetup as MockSetup
    from .config import judge_settings as judge_settings
    from .config import prepare_mocks as prepare_mocks
    from .discover import MockPlan as MockPlan
    from .discover import MockServer as MockServer
    from .discover import MockTool as MockTool
    from .discover import declared_servers as declared_servers
    from .discover import discover_mocks as discover_mocks
    from .discover import load_plan as load_plan
    from .recordings import recordings_notice as recordings_notice
    from .spec import MockSpec as MockSpec
    from .spec import parse_mock as parse_mock

_EXPORTS = {
    "MockOutcome": "calls",
    "attach": "calls",
    "collect_calls": "calls",
    "MockJudge": "config",
    "MockOptions": "config",
    "MockSetup": "config",
    "judge_settings": "config",
    "prepare_mocks": "config",
    "MockPlan": "discover",
    "MockServer": "discover",
    "MockTool": "discover",
    "declared_servers": "discover",
    "discover_mocks": "discover",
    "load_plan": "discover",
    "MockSpec": "spec",
    "parse_mock": "spec",
    "recordings_notice": "recordings",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
