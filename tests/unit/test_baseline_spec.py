"""``--eval-baseline-plugin``'s policy called directly (``suites.baseline``): each plugin's
baseline resolved once, or the one line why it cannot be had (the value's check is
tests/unit/test_options_rules.py's). The shell's
turning these lines into usage errors is tested once each in
tests/integration/test_baseline_plugin.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.suites.baseline import Baselines
from pytest_plugin_evals.suites.manifest import read_plugin
from tests.helpers import git, write_tree

FLAG = "--eval-baseline-plugin"
MANIFEST = json.dumps({"name": "demo", "version": "1.0.0"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose second commit adds the plugin in ``plugin/``."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write_tree(root, {"README.md": "first\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    write_tree(root, {"plugin/.claude-plugin/plugin.json": MANIFEST})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plugin")
    return root


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("git:HEAD~7", "{flag} git:HEAD~7: no commit 'HEAD~7' in the git repository {root}"),
        ("git:HEAD~1", "{flag} git:HEAD~1: plugin/ is not in HEAD~1 ({short})"),
    ],
    ids=["too-far-back", "plugin-not-there-yet"],
)
def test_a_baseline_that_cannot_be_had_is_said_once_per_plugin(
    repo: Path, tmp_path: Path, spec: str, message: str
) -> None:
    baselines = Baselines(spec, tmp_path / "shared")
    plugin = read_plugin(repo / "plugin")
    assert baselines.problem() is None
    assert baselines.of(plugin) is None
    short = git(repo, "rev-parse", "HEAD~1")[:12]
    assert baselines.problem() == message.format(flag=FLAG, root=repo, short=short)
    assert list(baselines.found) == [str(plugin.path)]


def test_a_baseline_is_resolved_once_per_plugin(repo: Path, tmp_path: Path) -> None:
    baselines = Baselines("git:HEAD", tmp_path / "shared")
    plugin = read_plugin(repo / "plugin")
    found = baselines.of(plugin)
    assert found is not None and found.name == "demo" and found.path.is_dir()
    assert found.path.is_relative_to(tmp_path / "shared")
    git(repo, "commit", "-q", "--allow-empty", "-m", "later")  # HEAD moves: still the first answer
    assert baselines.of(plugin) == found and baselines.problem() is None
