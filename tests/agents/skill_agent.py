"""A ``cmd:`` agent that uses the plugin's skills by name: when the prompt names a skill of the
plugin it was given (``skills/<skill>/SKILL.md`` under ``EVAL_PLUGIN_DIR``; ``word-count`` is
named by "word count"), it calls the ``Skill`` tool for ``<plugin>:<skill>`` and answers with
the line the skill's instructions end with; otherwise, and with no plugin, it cannot help."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

MARKER = re.compile(r"end with the line (\S+?)\.?$", re.MULTILINE)


def main() -> int:
    prompt = sys.stdin.read().lower()
    plugin = os.environ.get("EVAL_PLUGIN_DIR", "")
    skills = sorted(Path(plugin).glob("skills/*/SKILL.md")) if plugin else []
    for skill_md in skills:
        name = skill_md.parent.name
        if name.replace("-", " ") not in prompt and name not in prompt:
            continue
        call = {
            "type": "tool_call",
            "name": "Skill",
            "input": {"skill": f"{Path(plugin).name}:{name}"},
        }
        with Path(os.environ["EVAL_TRACE_FILE"]).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(call) + "\n")
        found = MARKER.search(skill_md.read_text(encoding="utf-8"))
        sys.stdout.write(f"Done with the {name} skill. {found.group(1) if found else ''}")
        return 0
    sys.stdout.write("I cannot help with that.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
