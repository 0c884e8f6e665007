"""``pytest --help`` with the plugin installed: every option and ini key is listed, readable."""

from __future__ import annotations

import re

import pytest

from pytest_plugin_evals.settings.options import OPTIONS


def test_help_lists_every_option_and_ini_key(pytester: pytest.Pytester) -> None:
    # argparse formats each help text with %: a bare "95% interval" is "% i", a format, and
    # the whole of --help then fails with a traceback.
    result = pytester.runpytest("--help", "-p", "no:cacheprovider")
    both = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, both
    assert "Traceback (most recent call last)" not in both
    out = result.stdout.str()
    ours = {option.flag for option in OPTIONS if option.on_cli}
    assert len(ours) > 30
    assert sorted(opt for opt in ours if opt not in out) == []
    assert "95% interval" in out  # the percent sign is shown as written
    ours_section = out[out.index("agent plugin evals") :].split("\n\n", 1)[0]
    assert "{" not in ours_section  # every other option a help names is named by its flag
    inis = set(re.findall(r"^  (eval_\w+) ", out, re.MULTILINE))
    assert inis == {option.ini for option in OPTIONS}
