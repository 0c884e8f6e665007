"""What is imported when: start-up costs every pytest run, so the heavy modules load only when
a hook first needs them (docs/explanation/performance.md; measured by bench/bench_import.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def loaded_after(code: str, of: tuple[str, ...] = ("pytest_plugin_evals",)) -> set[str]:
    """The modules of the packages ``of`` loaded in a fresh interpreter after running ``code``."""
    probe = code + "\nimport sys\nprint('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return {name for name in done.stdout.split() if name.partition(".")[0] in of}


def test_writing_a_document_loads_no_checks_of_one_read_back() -> None:
    loaded = loaded_after("import pytest_plugin_evals.reporting.document")
    assert "pytest_plugin_evals.reporting.document" in loaded
    assert "pytest_plugin_evals.reporting.document_check" not in loaded


def test_the_entry_point_imports_no_agent_declaration() -> None:
    """The options' agent names and ``--eval-<name>-bin`` come from a static list (checked
    against the registry by tests/unit/test_agent_registry.py): no spec module at start-up."""
    loaded = loaded_after("import pytest_plugin_evals.plugin")
    assert "pytest_plugin_evals.plugin.options" in loaded
    assert "pytest_plugin_evals.agents.registry" not in loaded
    assert not {name for name in loaded if name.endswith(".spec")}


#: What the entry point must not import: the controller's hooks (registered once the session
#: turns out to hold evals), the collectors and what they load, the engine, the reports. A
#: module named here loading at start-up costs every pytest session of the environment.
NOT_AT_START = (
    "engine",
    "model",
    "records",
    "runner",
    "making",
    "scoring",
    "stats",
    "recording",
    "reporting",
    "graders",
    "mocks",
    "agents.registry",
    "suites.directory",
    "plugin.session",
    "plugin.plan",
    "plugin.progress",
    "plugin.xdist",
    "plugin.limiter",
    "plugin.html_extras",
    "plugin.collect",
    "plugin.items",
    "plugin.runs",
)


def _heavy(loaded: set[str]) -> set[str]:
    return {
        name
        for name in loaded
        for heavy in NOT_AT_START
        if name == f"pytest_plugin_evals.{heavy}"
        or name.startswith(f"pytest_plugin_evals.{heavy}.")
    }


def test_the_entry_point_imports_no_pytest() -> None:
    """pytest's marker is pluggy's (``pytest.hookimpl`` is it), the StashKeys are made when
    first read, and a usage error imports pytest when it is raised."""
    assert loaded_after("import pytest_plugin_evals.plugin", ("pytest", "_pytest")) == set()
    assert "_pytest.config" in loaded_after("import pytest", ("pytest", "_pytest"))


def test_the_entry_point_imports_options_and_hooks_only() -> None:
    loaded = loaded_after("import pytest_plugin_evals.plugin")
    assert "pytest_plugin_evals.plugin.options" in loaded
    assert not _heavy(loaded)


def test_a_project_without_evals_loads_no_eval_machinery(tmp_path: Path) -> None:
    """The plugin installed costs an ordinary pytest run its options and hooks, not the model,
    the loaders, the agents, nor the controller's session."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    code = f"import pytest\npytest.main(['-q', '-p', 'no:cacheprovider', {str(tmp_path)!r}])"
    loaded = loaded_after(code)
    assert "pytest_plugin_evals.plugin.fixtures" in loaded  # the plugin was loaded
    assert not _heavy(loaded)


def test_a_project_with_evals_starts_the_controller(tmp_path: Path) -> None:
    """The check above is not vacuous: a session that collects an eval case loads them."""
    case = tmp_path / "evals" / "hello"
    case.mkdir(parents=True)
    (case / "prompt.md").write_text("say hello\n", encoding="utf-8")
    code = (
        f"import pytest\npytest.main(['-q', '--co', '-p', 'no:cacheprovider', {str(tmp_path)!r}])"
    )
    loaded = loaded_after(code)
    assert {"pytest_plugin_evals.plugin.session", "pytest_plugin_evals.plugin.items"} <= loaded
