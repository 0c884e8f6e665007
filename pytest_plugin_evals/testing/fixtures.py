"""The ``scripted_model`` pytest fixture: a :class:`ScriptedModel` started for one test.

Use it to test a plugin's plumbing against a real agent without a real model::

    from pytest_plugin_evals.testing import Rule, text, tool_use

    def test_skill_is_called(scripted_model, tmp_path):
        scripted_model.add(
            Rule(when_tool_result="Launching skill", reply=text("1.3.0")),
            Rule(when_prompt="version", reply=tool_use("Skill", {"skill": "rel:next-version"})),
        )
        env = {**os.environ, **scripted_model.env(), "HOME": str(tmp_path)}
        ...  # run the agent with env
        assert scripted_model.message_requests[-1]["tool_result"].startswith("Launching skill")
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .server import ScriptedModel


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A started :class:`ScriptedModel` with no rules (it answers ``OK``); stopped afterwards.

    Add rules with ``scripted_model.add(Rule(...))``; point the agent at it with
    ``scripted_model.env()``; read what the agent sent in ``scripted_model.requests``.
    """
    from .server import ScriptedModel

    model = ScriptedModel()
    model.start()
    try:
        yield model
    finally:
        model.stop()
