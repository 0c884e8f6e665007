"""Bubblewrap around an agent CLI: the layers, and what a confined process can really reach."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_plugin_evals.agents import confine
from pytest_plugin_evals.agents.confine import Confinement, confined_argv, install_root


def mounts(argv: list[str]) -> list[tuple[str, str]]:
    """``(flag, folder)`` of each layer, in order."""
    out, i = [], argv.index("--die-with-parent") + 1
    while argv[i] != "--":
        flag = argv[i]
        out.append((flag, argv[i + 1]))
        i += 2 if flag == "--tmpfs" else 3
    return out


def test_layers_apply_in_order_and_a_hidden_folder_shows_no_mount_points(tmp_path: Path) -> None:
    plugin, evals, case = tmp_path / "plugin", tmp_path / "plugin" / "evals", tmp_path / "x"
    (evals / "case").mkdir(parents=True)
    case.mkdir()
    layers = Confinement(
        (
            ("hide", tmp_path),
            ("read", plugin),
            ("hide", evals),
            ("hide", evals / "case"),  # inside a hidden folder: skipped
            ("read", tmp_path / "missing"),  # does not exist: skipped
            ("write", case),
        )
    )
    assert mounts(confined_argv(["true"], layers)) == [
        ("--tmpfs", str(tmp_path)),
        ("--ro-bind", str(plugin)),
        ("--tmpfs", str(evals)),
        ("--bind", str(case)),
    ]


def test_install_root_is_the_node_modules_folder(tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "@scope" / "cli" / "bin"
    package.mkdir(parents=True)
    (package / "cli.js").write_text("", encoding="utf-8")
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "cli").symlink_to(package / "cli.js")
    assert install_root(str(bin_dir / "cli")) == tmp_path / "node_modules"
    (tmp_path / "tool").write_text("", encoding="utf-8")
    assert install_root(str(tmp_path / "tool")) == tmp_path / "tool"  # not its whole folder


def test_without_bubblewrap_the_problem_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert confine.problem() == confine.UNAVAILABLE
    assert "apt install bubblewrap" in confine.UNAVAILABLE
    assert "--eval-unconfined-shell" in confine.UNAVAILABLE


def test_a_confined_process_reaches_only_what_its_layers_show(tmp_path: Path) -> None:
    if confine.problem() is not None:
        if os.environ.get("CI"):
            pytest.fail(str(confine.problem()))
        pytest.skip(str(confine.problem()))
    secret = tmp_path / "home" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("operator-only", encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    layers = Confinement((("hide", tmp_path / "home"), ("write", run)))
    script = (
        f"cat {secret}; echo made > {run / 'made.txt'}; echo x > {tmp_path / 'out.txt'}; echo done"
    )
    done = subprocess.run(
        confined_argv(["sh", "-c", script], layers),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert "done" in done.stdout, done.stderr
    assert "operator-only" not in done.stdout
    assert (run / "made.txt").read_text(encoding="utf-8") == "made\n"
    assert not (tmp_path / "out.txt").exists()  # everything else is read-only


def run_request(plugin: Path | None, suite_root: Path, case_dir: Path, box: Path) -> object:
    from types import SimpleNamespace

    sandbox = SimpleNamespace(**{k: box / k for k in ("home", "cwd", "config", "tmp")})
    case = SimpleNamespace(suite_root=suite_root, dir=case_dir, add_dirs=())
    return SimpleNamespace(sandbox=sandbox, case=case, plugin_dir=plugin)


def test_a_run_hides_the_evals_folder_but_not_a_plugin_that_holds_its_suite(
    tmp_path: Path,
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "evals" / "case").mkdir(parents=True)
    box = tmp_path / "box"
    # Case folders under evals/: both hidden, the plugin shown.
    request = run_request(plugin, plugin / "evals", plugin / "evals" / "case", box)
    layers = confine.for_run(request, "/bin/true").layers  # type: ignore[arg-type]
    assert ("read", plugin) in layers
    assert ("hide", plugin / "evals") in layers and ("hide", plugin / "evals" / "case") in layers
    # A package.json suite at the plugin's root: hiding it would hide the plugin itself.
    request = run_request(plugin, plugin, plugin, box)
    layers = confine.for_run(request, "/bin/true").layers  # type: ignore[arg-type]
    assert ("read", plugin) in layers and ("hide", plugin) not in layers
    # The without arm does not load the plugin: it stays hidden, suite and all.
    request = run_request(None, plugin, plugin, box)
    layers = confine.for_run(request, "/bin/true").layers  # type: ignore[arg-type]
    assert ("hide", plugin) in layers and ("read", plugin) not in layers
