"""Progress you can watch: plain lines every few seconds when the output is not a terminal (a CI
log), a live line on a terminal that leaves pytest's own output intact, none under ``-qq`` or
``--eval-progress off``, and nothing at all in a session without eval runs."""

from __future__ import annotations

import os
import re
import select
import shlex
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

#: Every run takes a while and costs $0.25.
SLOW = [{"match": "", "sleep": 1.5, "reply": "42", "usage": {"cost_usd": 0.25}}]

#: A plain progress line, as it is printed (one arm: runs are named ``ask[1]``).
LINE = re.compile(
    r"evals: [0-3]/3 runs done · [0-3] in flight"
    r"(?: \((?:longest: )?ask\[[123]\] (?:\d+[hms])+\))?"
    r"(?: · \$\d+\.\d\d (?:spent|of \$5\.00))?"
    r"(?: · ETA (?:\d+[hms])+)?"
)


@pytest.fixture
def suite(pytester: pytest.Pytester, scripted_agent: Any) -> str:
    """One case of three slow runs (one arm), and a parametrized Python test beside it, whose
    ``[1]`` is not an eval run. Returns the ``--eval-agent`` value."""
    write_tree(
        pytester.path,
        {
            "evals/ask/prompt.md": "---\nruns: 3\n---\nWhat is the answer?\n",
            "evals/ask/graders/answer.md": "---\ntype: regex\npattern: '42'\n---\n",
            "test_other.py": (
                "import pytest\n\n"
                "@pytest.mark.parametrize('n', [1])\n"
                "def test_other(n):\n    assert n\n"
            ),
        },
    )
    return scripted_agent(SLOW)


def progress_lines(output: list[str]) -> list[str]:
    return [line for line in output if line.startswith("evals: ")]


#: Many short runs, a cent each: rows of dots that reach pytest's right margin. A shell script,
#: not the scripted agent: 33 runs of it would start 33 interpreters.
QUICK = """\
cat > /dev/null
sleep 0.1
printf '{"type": "usage", "cost_usd": 0.01}\\n' >> "$EVAL_TRACE_FILE"
echo 42
"""

#: A row of pytest's dots (the case's, the Python test's, or a row that went on past the margin)
#: ending with its percentage.
ROW = re.compile(r"(?:evals/ask |test_other\.py )?\.+ +\[ *\d+%\]")


@pytest.mark.workers  # the controller's lines, of what crossed from the workers
def test_plain_lines_go_between_rows_and_say_runs_done_in_flight_spend_and_eta(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(
        pytester.path,
        {
            # 34 items: two rows of dots at either width (a row past pytest's margin)
            "evals/ask/prompt.md": "---\nruns: 33\n---\nWhat is the answer?\n",
            "evals/ask/graders/answer.md": "---\ntype: regex\npattern: '42'\n---\n",
            "test_other.py": "def test_other():\n    pass\n",
            "quick.sh": QUICK,
        },
    )
    monkeypatch.setenv("COLUMNS", "40")  # pytest's narrowest: rows of 21 (-n0) or 31 dots
    agent = "cmd:" + shlex.join(["sh", str(pytester.path / "quick.sh")])
    result = pytester.runpytest(
        "evals", "test_other.py", *plugin_args, "--eval-agent", agent,
        "--eval-progress", "0.2", "--eval-max-cost-usd", "5", "--eval-run-ahead", "off",
    )  # fmt: skip
    result.assert_outcomes(passed=34)
    out = result.outlines
    rows = [i for i, line in enumerate(out) if "..." in line or ROW.fullmatch(line)]
    assert len(rows) >= 2, result.stdout.str()
    lines = [i for i, line in enumerate(out) if line.startswith("evals: ")]
    # Every row of dots is whole, however many progress lines were due while it went on.
    for i in range(rows[0], rows[-1] + 1):
        assert i in lines or ROW.fullmatch(out[i]), (out[i], result.stdout.str())
    # Lines between two rows, while runs were in flight: the runs done, those in flight, the
    # cost against the ceiling and how long the rest will take (the Python test is not a run).
    between = [out[i] for i in lines if rows[0] < i < rows[-1]]
    assert between, result.stdout.str()
    for line in between:
        assert re.fullmatch(
            r"evals: \d+/33 runs done · [0-2] in flight(?: \((?:longest: )?ask\[\d+\] \d+s\))?"
            r" · \$0\.\d\d of \$5\.00 · ETA (\d+[hms])+",
            line,
        ), line
    assert any(re.search(r" in flight \((?:longest: )?ask\[\d+\] \d+s\) · ", x) for x in between)
    result.stdout.fnmatch_lines(["*= plugin evals =*", "CASE *", "ask *", "*34 passed*"])


def test_the_interval_comes_from_the_ini_file_too(pytester: pytest.Pytester, suite: str) -> None:
    """(The command line winning over the ini file, for every option:
    tests/unit/test_options_declared.py.)"""
    pytester.makeini("[pytest]\neval_progress = 0.2\n")
    # The case's row ends where the Python test's begins: a line due while it went on is
    # printed there.
    result = pytester.runpytest(
        "evals", "test_other.py", "-n0", "-p", "no:cacheprovider", "--eval-agent", suite,
        "--eval-run-ahead", "off",
    )  # fmt: skip
    result.assert_outcomes(passed=4)
    lines = progress_lines(result.outlines)
    assert lines and all(LINE.fullmatch(line) for line in lines), result.stdout.str()
    assert any(line.endswith(" spent") or " spent · ETA" in line for line in lines), lines


@pytest.mark.parametrize("args", [["-qq"], ["--eval-progress", "off"]], ids=["qq", "off"])
def test_no_progress_when_very_quiet_or_off(
    pytester: pytest.Pytester, plugin_args: list[str], suite: str, args: list[str]
) -> None:
    """Whether lines are printed is decided from the options alike in either process (the
    controller's lines under workers: the tests above and below)."""
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", suite, "--eval-progress", "0.1", *args
    )
    assert result.ret == 0, result.stdout.str()
    assert "runs done" not in result.stdout.str()


@pytest.mark.workers  # the controller collects nothing under workers
def test_a_session_without_eval_runs_shows_no_progress(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    pytester.makepyfile(
        test_slow=(
            "import time, pytest\n\n"
            "@pytest.mark.parametrize('n', [1, 2])\n"
            "def test_slow(n):\n    time.sleep(0.6)\n"
        )
    )
    result = pytester.runpytest(*plugin_args, "--eval-progress", "0.1")
    result.assert_outcomes(passed=2)
    assert "evals:" not in result.stdout.str()


@pytest.mark.parametrize(
    ("where", "value", "named"),
    [("option", "soon", "--eval-progress"), ("ini", "-1", "ini eval_progress")],
)
def test_a_bad_interval_is_one_line(
    pytester: pytest.Pytester, where: str, value: str, named: str
) -> None:
    if where == "ini":
        pytester.makeini(f"[pytest]\neval_progress = {value}\n")
        args = []
    else:
        args = ["--eval-progress", value]
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: {named} must be a number of seconds above 0, or off (got '{value}')"]
    )
    assert "Traceback" not in result.stderr.str()


# -- on a terminal ------------------------------------------------------------------------------

_SEQUENCE = re.compile(
    r"\x1b\[([0-9;?]*)([@-~])"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC (pytest's progress for the tab)
    r"|\x1b[()][0-~]"
    r"|(.)",
    re.DOTALL,
)


def screen(text: str) -> list[str]:
    """What a terminal shows once ``text`` was written to it: the cursor moves and erasures
    that the live line uses, carriage returns and line feeds (no scrolling: every row kept)."""
    rows: list[list[str]] = [[]]
    row = col = 0
    for match in _SEQUENCE.finditer(text):
        params, final, char = match.groups()
        while len(rows) <= row:
            rows.append([])
        if final:
            count = int(params) if params.isdigit() else 1
            if final == "A":
                row = max(row - count, 0)
            elif final == "B":
                row += count
            elif final == "C":
                col += count
            elif final == "D":
                col = max(col - count, 0)
            elif final == "K":
                del rows[row][col:]
            continue
        if char is None:
            continue
        if char == "\r":
            col = 0
        elif char == "\n":
            row += 1
        else:
            line = rows[row]
            line.extend(" " * (col - len(line)))
            line[col : col + 1] = [char]
            col += 1
    return ["".join(r).rstrip() for r in rows]


def run_in_terminal(args: list[str], cwd: Path, columns: int = 100) -> str:
    """Run ``python -m pytest ARGS`` with a pseudo-terminal as its stdin, stdout and stderr."""
    import fcntl
    import pty
    import termios

    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm", PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd, env=env, stdin=child, stdout=child, stderr=child, start_new_session=True,
    )  # fmt: skip
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(main, 65536)
            except OSError:  # the terminal's other end is closed: the session ended
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    return b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize("workers", ["-n0", "-n2"])
def test_a_terminal_shows_a_live_line_and_keeps_the_output_intact(
    pytester: pytest.Pytester, suite: str, workers: str
) -> None:
    output = run_in_terminal(
        ["evals", workers, "-p", "no:cacheprovider", "--eval-agent", suite,
         "--eval-max-cost-usd", "5", "--eval-run-ahead", "off"],
        pytester.path,
    )  # fmt: skip
    assert "\x1b[" in output, output  # a terminal: colours, and the live line's cursor moves
    live = re.findall(r"evals: \d/3 runs done · [0-3] in flight[^\x1b\r\n]*", output)
    assert any("in flight (ask[" in line for line in live), output
    assert any(re.search(r"\$0\.\d\d of \$5\.00", line) for line in live), live
    shown = screen(output)
    assert not any("runs done" in line for line in shown), "\n".join(shown)
    dots = r"evals/ask \.\.\. +\[100%\]" if workers == "-n0" else r"\.\.\. +\[100%\]"
    assert any(re.fullmatch(dots, line) for line in shown), "\n".join(shown)
    at = next(i for i, line in enumerate(shown) if "plugin evals" in line)
    assert re.fullmatch(r"=+ plugin evals =+", shown[at]), shown[at]
    assert shown[at + 1].startswith("CASE ") and shown[at + 2].startswith("ask ")
    last = [line for line in shown if line][-1]
    assert re.fullmatch(r"=+ 3 passed in [\d.]+s(?: \(\S+\))? =+", last), last
