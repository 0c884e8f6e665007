"""Credentials are replaced wherever they appear verbatim."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.model import ToolCall, Transcript
from pytest_plugin_evals.util.redact import Redactor, secrets_in

KEY = "sk-ant-api03-abcdefgh"
TOKEN = "oauth-token-123456789"


def test_only_credential_variables_with_real_values_are_secrets() -> None:
    env = {
        "ANTHROPIC_API_KEY": KEY,
        "CLAUDE_CODE_OAUTH_TOKEN": TOKEN,
        "AWS_SECRET_ACCESS_KEY": "aws-secret-value",
        "ANTHROPIC_AUTH_TOKEN": "short",
        "PATH": "/usr/bin:/bin",
        "ANTHROPIC_MODEL": "claude-sonnet-4",
    }
    assert secrets_in(env) == {
        "ANTHROPIC_API_KEY": KEY,
        "CLAUDE_CODE_OAUTH_TOKEN": TOKEN,
        "AWS_SECRET_ACCESS_KEY": "aws-secret-value",
    }


def test_text_bytes_and_records_are_redacted() -> None:
    redactor = Redactor({"ANTHROPIC_API_KEY": KEY, "CLAUDE_CODE_OAUTH_TOKEN": TOKEN})
    assert redactor.text(f"a {KEY} b {TOKEN}{KEY}") == (
        "a [redacted ANTHROPIC_API_KEY] b [redacted CLAUDE_CODE_OAUTH_TOKEN]"
        "[redacted ANTHROPIC_API_KEY]"
    )
    assert redactor.data(f'{{"k":"{KEY}"}}'.encode()) == b'{"k":"[redacted ANTHROPIC_API_KEY]"}'
    transcript = Transcript(
        final_message=f"the key: {KEY}",
        tool_calls=[ToolCall("Bash", {"command": f"echo {KEY}", "n": [KEY, 1]}, KEY)],
        error=f"exit 1: {TOKEN}",
        notes=[f"note {KEY}"],
        cwd=Path("/tmp/cwd"),
    )
    clean = redactor.scrub(transcript)
    assert KEY not in repr(clean) and TOKEN not in repr(clean)
    assert clean.tool_calls[0].input == {
        "command": "echo [redacted ANTHROPIC_API_KEY]",
        "n": ["[redacted ANTHROPIC_API_KEY]", 1],
    }
    assert clean.cwd == Path("/tmp/cwd")
    assert KEY in transcript.final_message  # the original is left as it was


def test_nothing_to_redact_leaves_values_alone() -> None:
    @dataclass(frozen=True)
    class Record:
        text: str
        items: list[str] = field(default_factory=list)

    record = Record("plain", ["a"])
    assert Redactor({}).scrub(record) is record
    assert Redactor({}).scrub(Record("lone \ud800")) == Record("lone \ufffd")
    assert Redactor({"X_TOKEN": "abcdefghij"}).scrub(record) is record
    assert not Redactor({})
