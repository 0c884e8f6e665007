"""The temporary folders of a killed session (the shared ``plugin-evals-*``, the sockets'
``plugin-evals-net-*``, the mock host's ``evm-*``) are removed by a later session, after what
their session left running is killed; a live session's, and folders that are not the plugin's,
are left alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pytest_plugin_evals.util.process import SESSION_TAG
from pytest_plugin_evals.util.tempdirs import (
    OWNER_FILE,
    mark_owner,
    shared_folder,
    sweep_stale,
    sweep_stale_sessions,
)

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux: /proc")


def owned_by_an_ended_process(folder: Path) -> None:
    """``folder`` as an ended process left it: its owner file names that process."""
    code = (
        "from pathlib import Path; from pytest_plugin_evals.util.tempdirs import mark_owner; "
        f"mark_owner(Path({str(folder)!r}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert (folder / OWNER_FILE).is_file()


def test_the_folders_of_ended_sessions_are_removed_and_no_other(tmp_path: Path) -> None:
    stale = [tmp_path / name for name in ("plugin-evals-1a", "plugin-evals-net-2b", "evm-3c")]
    live = tmp_path / "plugin-evals-live"
    unowned = tmp_path / "plugin-evals-unowned"
    other = tmp_path / "someone-else"
    for folder in (*stale, live, unowned, other):
        folder.mkdir()
        (folder / "file.txt").write_text("x", encoding="utf-8")
    for folder in (*stale, other):
        owned_by_an_ended_process(folder)
    mark_owner(live)  # this process: alive
    seen: list[Path] = []
    removed = sweep_stale(seen.append, bases=[tmp_path])
    assert sorted(removed) == sorted(stale) == sorted(seen)  # each handed over first
    assert not any(folder.exists() for folder in stale)
    assert live.is_dir() and unowned.is_dir() and other.is_dir()


def test_a_reused_pid_is_not_taken_for_the_owner(tmp_path: Path) -> None:
    folder = tmp_path / "plugin-evals-reused"
    folder.mkdir()
    mark_owner(folder)
    pid, started = (folder / OWNER_FILE).read_text(encoding="utf-8").split()
    # This process's PID, but another start time: the owner that made it has ended.
    (folder / OWNER_FILE).write_text(f"{pid} {int(started) - 1}\n", encoding="utf-8")
    assert sweep_stale(bases=[tmp_path]) == [folder]


def test_a_killed_sessions_folder_goes_with_what_its_runs_left_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / "plugin-evals-killed"
    folder.mkdir()
    owned_by_an_ended_process(folder)
    left = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={**os.environ, SESSION_TAG: folder.name},
    )
    try:
        # Its environment is readable once its exec is done (a read during it finds nothing).
        tag = f"{SESSION_TAG}={folder.name}".encode()
        deadline = time.monotonic() + 10
        while tag not in Path(f"/proc/{left.pid}/environ").read_bytes():
            assert time.monotonic() < deadline, "the child's environment never showed its tag"
            time.sleep(0.01)
        assert folder in sweep_stale_sessions()
        assert left.wait(timeout=30) != 0  # killed, not ended on its own
    finally:
        left.kill()
        left.wait()
    assert not folder.exists()


def test_the_shared_folder_is_the_controller_s_on_a_worker(tmp_path: Path) -> None:
    """A worker takes the folder its controller hands it; the controller's is private, named
    as a later session's sweep finds it, and owned by this process (the sweep spares it)."""
    assert shared_folder(str(tmp_path)) == tmp_path
    made = shared_folder(None)
    try:
        assert made.name.startswith("plugin-evals-") and made.parent == Path(tempfile.gettempdir())
        assert (made / OWNER_FILE).read_text(encoding="utf-8").split()[0] == str(os.getpid())
    finally:
        shutil.rmtree(made)
