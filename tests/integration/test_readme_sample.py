"""The README's sample output is what ``scripts/example.sh`` prints: the command in that script
(its replay of the example plugin's recorded runs) is run, and every line of the README's block
must be a line of its output, in order, where only a ``...`` line may stand for lines left out.
Timings are the one thing compared loosely (a session's time is never the same twice)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "example.sh"
ELIDED = "..."
#: ``0.84s``, ``1s``, ``1m22s``: a duration.
DURATION = re.compile(r"\b(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?s\b")


def example_command() -> list[str]:
    """The pytest command ``scripts/example.sh`` runs (its ``exec`` line), with this Python."""
    text = SCRIPT.read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [row for row in text.splitlines() if row.startswith("exec ") and "pytest" in row]
    words = shlex.split(line)[1:]
    assert words[:3] == [".venv/bin/python", "-m", "pytest"], words
    return [sys.executable, *[w for w in words[1:] if w != "$@"]]


def readme_block() -> list[str]:
    """The README's sample block, without its ``$`` command line."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"^```\n\$ bash scripts/example\.sh[^\n]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL
    )
    assert found, "README.md has no sample block starting `$ bash scripts/example.sh`"
    return found.group(1).splitlines()


def normal(line: str) -> str:
    """A line with its durations (and the padding they shift) made equal."""
    return re.sub(r"^=+ | =+$", "==", DURATION.sub("<t>", line.rstrip()))


def unmatched(block: list[str], output: list[str]) -> str | None:
    """The first line of ``block`` not found in ``output`` where it should be, or None."""
    real = [normal(line) for line in output]
    at, skipping = 0, False
    for line in block:
        if line == ELIDED:
            skipping = True
            continue
        want = normal(line)
        if skipping:
            while at < len(real) and real[at] != want:
                at += 1
        if at >= len(real) or real[at] != want:
            return line
        at, skipping = at + 1, False
    return None


def test_the_readme_sample_is_what_the_example_prints(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run(
        [*example_command(), f"--eval-output-dir={tmp_path / 'results'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    output = done.stdout.splitlines()
    missing = unmatched(readme_block(), output)
    assert missing is None, (
        f"README.md's sample line is not in scripts/example.sh's output:\n{missing}\n"
        "--- the output:\n" + "\n".join(output)
    )


def test_a_line_that_is_not_printed_is_found_out() -> None:
    output = ["a 1s", "b", "c", "= 3 passed in 0.5s ="]
    assert unmatched(["a 2s", "...", "c", "== 3 passed in 10.25s =="], output) is None
    assert unmatched(["a 1s", "c"], output) == "c"  # a skipped line needs a `...`
    assert unmatched(["...", "d"], output) == "d"
