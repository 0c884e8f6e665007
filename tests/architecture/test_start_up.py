"""What is imported when: start-up costs every pytest run, so the heavy modules load only when
a hook first needs them (docs/explanation/performance.md; measured by bench/bench_import.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def loaded_after(code: str) -> set[str]:
    """The package's modules loaded in a fresh interpreter after running ``code``."""
    probe = code + "\nimport sys\nprint('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return {name for name in done.stdout.split() if name.startswith("pytest_plugin_evals")}


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


def test_a_project_without_evals_loads_no_eval_machinery(tmp_path: Path) -> None:
    """The plugin installed costs an ordinary pytest run its options and hooks, not the model,
    the loaders or the agents."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    code = f"import pytest\npytest.main(['-q', '-p', 'no:cacheprovider', {str(tmp_path)!r}])"
    loaded = loaded_after(code)
    assert "pytest_plugin_evals.plugin.session" in loaded  # the plugin was loaded
    heavy = {
        "model",
        "records",
        "runner",
        "suites.directory",
        "agents.registry",
        "reporting.result",
    }
    assert not {m for m in heavy if f"pytest_plugin_evals.{m}" in loaded}
