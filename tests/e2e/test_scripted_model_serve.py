"""``python -m pytest_plugin_evals.testing serve``: the scripted model as a process of its own,
started as a user starts it and driven by the real ``claude -p``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVE = [sys.executable, "-m", "pytest_plugin_evals.testing", "serve"]
URL = re.compile(r"^scripted model on (http://127\.0\.0\.1:(\d+)) \((\d+) rules? from (.+)\)")

RULES_YAML = """\
default_text: nothing matched
rules:
  - when_tool_result: "Launching skill"
    reply: {text: "The next version is 1.4.1."}
  - when_prompt: {regex: "next (version|release)"}
    times: 1
    reply:
      - text: "Let me check."
      - tool_use: {name: Skill, input: {skill: "release-helper:next-version"}}
"""


class Server:
    def __init__(self, rules: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [*SERVE, "--port", "0", str(rules), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = URL.match(first)
        assert found, first + (self.process.stderr.read() if self.process.stderr else "")
        self.url, self.port, self.rules = found.group(1), int(found.group(2)), int(found.group(3))
        self.header = [first, self.process.stdout.readline(), self.process.stdout.readline()]

    def end(self, how: int) -> tuple[int, str]:
        self.process.send_signal(how)
        out, err = self.process.communicate(timeout=30)
        assert err == ""
        return self.process.returncode, out

    def close(self) -> None:
        """Killed if still serving; its pipes closed either way (no file left to the collector)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES_YAML, encoding="utf-8")
    server = Server(rules)
    yield server
    server.close()


def claude(url: str, claude_bin: str, home: Path, prompt: str) -> str:
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    done = subprocess.run(
        [claude_bin, "-p", "--max-turns", "3", prompt],
        env=env, cwd=home, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.stdout.strip()


def test_served_rules_answer_the_real_claude(
    served: Server, claude_bin: str, tmp_path: Path
) -> None:
    assert served.rules == 2 and served.port > 0
    assert served.header[1].strip() == f"ANTHROPIC_BASE_URL={served.url} ANTHROPIC_API_KEY=sk-test"
    # The Skill call is answered by Claude Code (an unknown skill here), then the default text.
    answer = claude(served.url, claude_bin, tmp_path / "home", "What is the next version?")
    assert answer == "nothing matched"
    # times: 1 is spent; the prompt rule no longer matches.
    again = claude(served.url, claude_bin, tmp_path / "home2", "And the next release?")
    assert again == "nothing matched"
    status, out = served.end(signal.SIGTERM)
    assert status == 0
    lines = out.splitlines()
    assert (
        "POST /v1/messages model claude-opus-5-5: rules[1] (prompt 'What is the next version?')"
        in lines
    )
    assert lines[-1].startswith("stopped after ") and lines[-1].endswith(" request(s)")


def test_a_launched_skill_gets_the_tool_result_rule(claude_bin: str, tmp_path: Path) -> None:
    """A JSON rules file, and a skill that exists: the tool-result rule answers after it."""
    skill = tmp_path / "home" / ".claude" / "skills" / "next-version"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: next-version\ndescription: the next version\n---\nSay 1.4.1.\n", "utf-8"
    )
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {"when_tool_result": "Launching skill", "reply": "The next version is 1.4.1."},
                {
                    "when_prompt": "next version",
                    "reply": [{"tool_use": {"name": "Skill", "input": {"skill": "next-version"}}}],
                },
            ]
        ),
        encoding="utf-8",
    )
    server = Server(rules, "--quiet")
    try:
        answer = claude(server.url, claude_bin, tmp_path / "home", "What is the next version?")
        assert answer == "The next version is 1.4.1."
        status, out = server.end(signal.SIGINT)  # Ctrl-C
    finally:
        server.close()
    assert status == 0
    assert out.splitlines()[-1].startswith("stopped after ")
    assert "POST" not in out  # --quiet


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("typo.yaml", "rules:\n  - when_promt: x\n    reply: hi\n",
         "{path}:2: rules[0]: unknown key 'when_promt' (keys: reply, when_prompt, "
         "when_tool_offered, when_tool_result, when_model, times)"),
        ("part.yaml", "rules:\n  - reply:\n      - text: a\n      - txt: b\n",
         "{path}:4: rules[0].reply[1]: unknown key 'txt' (keys: text, tool_use, error, delay)"),
        ("regex.yaml", "- when_prompt: {regex: '('}\n  reply: hi\n",
         "{path}:1: rules[0].when_prompt: invalid regex: missing ), unterminated subpattern at "
         "position 0"),
        ("status.yaml", "- reply: {error: 200}\n",
         "{path}:1: rules[0].reply.error: error() needs an HTTP error status from 400 to 599, "
         "got 200"),
        ("broken.json", '[{"reply": "hi"},\n {"reply": }]\n',
         "{path}:2: invalid JSON: Expecting value"),
        ("broken.yaml", "rules: [\n", "{path}:2: invalid YAML: *"),
        ("empty.yaml", "", "{path}:1: an empty file (expected rules: a list of rules)"),
        ("missing.yaml", None, "{path}: cannot read: No such file or directory"),
    ],
)  # fmt: skip
def test_a_bad_rules_file_is_one_line(
    tmp_path: Path, name: str, text: str | None, line: str
) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [*SERVE, "--port", "0", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    (said,) = done.stderr.splitlines()
    expected = "error: " + line.format(path=path)
    assert re.fullmatch(re.escape(expected).replace(r"\*", ".*"), said), said


def test_a_taken_port_is_one_line(served: Server, tmp_path: Path) -> None:
    rules = tmp_path / "more.yaml"
    rules.write_text("- reply: hi\n", encoding="utf-8")
    done = subprocess.run(
        [*SERVE, "--port", str(served.port), str(rules)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    (said,) = done.stderr.splitlines()
    assert said == f"error: cannot listen on 127.0.0.1:{served.port}: Address already in use"
