"""``pytest --help`` with the plugin installed: every option and ini key is listed, readable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_plugin_evals.plugin import options


def test_help_lists_every_option_and_ini_key(pytester: pytest.Pytester) -> None:
    # argparse formats each help text with %: a bare "95% interval" is "% i", a format, and
    # the whole of --help then fails with a traceback.
    result = pytester.runpytest("--help", "-p", "no:cacheprovider")
    both = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, both
    assert "Traceback (most recent call last)" not in both
    out = result.stdout.str()
    source = Path(options.__file__).read_text(encoding="utf-8")
    ours = set(re.findall(r'"(--eval-[a-z0-9-]+)"', source))
    assert len(ours) > 30
    assert sorted(opt for opt in ours if opt not in out) == []
    assert "95% interval" in out  # the percent sign is shown as written
    inis = set(re.findall(r"^  (eval_\w+) ", out, re.MULTILINE))
    assert len(inis) > 30
