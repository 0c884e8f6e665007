"""The sandbox itself, with the real bubblewrap: what a confined process sees, reaches, and may
use. (Every agent CLI's shell is probed end to end in tests/e2e/test_escapes.py.)"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents import confine
from pytest_plugin_evals.agents.confine import Confinement, install_root, mount_args, tool_installs
from pytest_plugin_evals.agents.confine.bounds import Bounds, parse_size, show_size
from pytest_plugin_evals.agents.confine.network import Endpoint


@pytest.fixture
def sandbox_ready() -> None:
    """bubblewrap, socat and prlimit, as .ci/run installs them (a failure in CI)."""
    why = confine.problem()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


class Run:
    """A run's folders (home, cwd, config, tmp) under ``root``, beside an operator's files."""

    def __init__(self, root: Path) -> None:
        self.root = root / "run"
        self.home, self.config, self.tmp = (self.root / n for n in ("home", "config", "tmp"))
        self.cwd = self.home / "cwd"
        for folder in (self.cwd, self.config, self.tmp):
            folder.mkdir(parents=True)

    def confinement(self, **fields: object) -> Confinement:
        defaults: dict[str, object] = {
            "write": (self.home, self.config),
            "tmp": self.tmp,
            "cwd": self.cwd,
            "tag": "unit",
        }
        return Confinement(**{**defaults, **fields})  # type: ignore[arg-type]

    def run(self, script: str, timeout: float = 30, **fields: object) -> tuple[str, Any]:
        """Run ``script`` (sh) confined; its output and the process result."""
        ready = confine.prepare(self.confinement(**fields), ["/bin/sh", "-c", script], ENV)
        out = self.root / f"out-{len(list(self.root.glob('out-*')))}"
        out.mkdir()
        result = ready.run(stdin_text="", cwd=self.cwd, timeout=timeout, out_dir=out)
        return result.stdout + result.stderr_tail(), result


ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.fixture
def run(tmp_path: Path, sandbox_ready: None) -> Run:
    return Run(tmp_path)


def test_the_file_system_is_an_allow_list(run: Run, tmp_path: Path) -> None:
    plugin = tmp_path / "repo" / "plugin"
    files = {
        plugin / "skills" / "SKILL.md": "SKILL-TEXT",
        plugin / "evals" / "case" / "grader.md": "GRADER-TEXT",
        plugin / ".env": "PLUGIN-DOTENV",
        tmp_path / "repo" / ".env": "REPO-DOTENV",
        tmp_path / "sibling" / "notes.txt": "SIBLING-TEXT",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    script = (
        f"cat {' '.join(str(p) for p in files)}; ls {plugin}/evals | tr -d '\n'; echo;"
        " head -c 5 /etc/shadow; echo made > made.txt && echo WROTE-CWD;"
        f" echo x > {plugin}/x.txt; echo t > /tmp/t.txt && echo WROTE-TMP; echo TMPDIR=$TMPDIR"
    )
    output, _ = run.run(script, read=(plugin,), hide=(plugin / "evals", plugin / ".env"))
    assert "SKILL-TEXT" in output  # what it may read
    for hidden in ("GRADER-TEXT", "PLUGIN-DOTENV", "REPO-DOTENV", "SIBLING-TEXT", "root:"):
        assert hidden not in output
    listing = output.split("SKILL-TEXT", 1)[1]
    assert "case" not in listing.split("WROTE-CWD")[0].split("\n")[0]  # evals/ is empty
    assert "WROTE-CWD" in output and (run.cwd / "made.txt").exists()
    assert not (plugin / "x.txt").exists()  # the plugin is read-only
    # Its /tmp is the run's own, on disk in the run's folder; TMPDIR is a folder of it.
    assert "WROTE-TMP" in output and (run.tmp / "t.txt").read_text() == "t\n"
    assert "TMPDIR=/tmp/run" in output


def test_a_folder_shown_inside_a_hidden_one_shows_alone(run: Run, tmp_path: Path) -> None:
    case = tmp_path / "evals" / "case"
    (case / "fixtures").mkdir(parents=True)
    (case / "fixtures" / "data.txt").write_text("DATA-42", encoding="utf-8")
    (case / "grader.md").write_text("GRADER-TEXT", encoding="utf-8")
    layers: dict[str, Any] = {"read": (tmp_path / "evals", case / "fixtures"), "hide": (case,)}
    args = mount_args(run.confinement(**layers))
    # Shallowest first: the evals folder shown, the case emptied, its fixtures shown again.
    order = [args[i + 1] for i, a in enumerate(args) if a in ("--ro-bind", "--tmpfs")]
    wanted = [str(tmp_path / "evals"), str(case), str(case / "fixtures")]
    assert [p for p in order if p in wanted] == wanted
    output, _ = run.run(
        f"cat {case}/fixtures/data.txt; echo; echo LS: $(ls {case}); cat {case}/grader.md",
        **layers,
    )
    assert "DATA-42" in output and "GRADER-TEXT" not in output
    listed = next(line for line in output.splitlines() if line.startswith("LS:"))
    assert listed.split()[1:] == ["fixtures"]  # the case shows nothing else


def test_no_host_process_is_seen_read_or_signalled(run: Run) -> None:
    canary = subprocess.Popen(
        ["sleep", "300"], env={**ENV, "CANARY": "host-environ-7c1d"}, start_new_session=True
    )
    try:
        script = (
            "ls /proc | grep -c '^[0-9]'; "
            f"cat /proc/{canary.pid}/environ; ls /proc/{canary.pid}/cwd/; "
            f"kill -9 {canary.pid} && echo KILLED; "
            "for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $e; done 2>/dev/null; echo end"
        )
        output, _ = run.run(script)
        seen = int(output.split()[0])
        assert seen < 10  # its own few processes, not the host's
        assert "host-environ-7c1d" not in output and "KILLED" not in output
        assert canary.poll() is None
    finally:
        canary.kill()
        canary.wait()


def test_everything_it_started_ends_with_it(run: Run) -> None:
    marker = f"301.{uuid.uuid4().int % 10**6:06d}"
    output, _ = run.run(f"setsid sh -c 'sleep {marker}' </dev/null >/dev/null 2>&1 & echo left")
    assert "left" in output
    deadline = time.monotonic() + 5
    while processes_with(marker):
        assert time.monotonic() < deadline, "a daemon outlived its run"
        time.sleep(0.05)


def processes_with(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            pass
    return found


class Listener:
    """A loopback listener that answers ``pong`` and counts its connections."""

    def __init__(self, family: int = socket.AF_INET, address: object = ("127.0.0.1", 0)):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)  # type: ignore[arg-type]
        self.sock.listen(8)
        self.seen = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.seen += 1
            with conn:
                conn.sendall(b"pong\n")

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])


@pytest.fixture
def listeners() -> Iterator[tuple[Listener, Listener, Listener]]:
    allowed, other = Listener(), Listener()
    abstract = Listener(socket.AF_UNIX, f"\0evals-unit-{uuid.uuid4().hex}")
    yield allowed, other, abstract
    for listener in (allowed, other, abstract):
        listener.sock.close()


def test_the_network_reaches_its_endpoints_and_nothing_else(
    run: Run, listeners: tuple[Listener, Listener, Listener]
) -> None:
    allowed, other, abstract = listeners
    socat = shutil.which("socat")
    name = str(abstract.sock.getsockname()).lstrip("\0")
    script = (
        f"{socat} -T2 - TCP:127.0.0.1:{allowed.port} </dev/null; "
        f"{socat} -T2 - TCP:127.0.0.1:{other.port} </dev/null || echo OTHER-REFUSED; "
        f"{socat} -T2 - ABSTRACT-CONNECT:{name} </dev/null || echo ABSTRACT-REFUSED; "
        f"{socat} -T2 - TCP:1.1.1.1:53,connect-timeout=2 </dev/null || echo OUTSIDE-REFUSED"
    )
    output, _ = run.run(script, endpoints=(Endpoint("127.0.0.1", allowed.port),))
    assert "pong" in output and allowed.seen == 1  # through the forwarder and the relay
    assert "OTHER-REFUSED" in output and other.seen == 0
    assert "ABSTRACT-REFUSED" in output and abstract.seen == 0
    assert "OUTSIDE-REFUSED" in output  # no outside interface at all


def test_an_endpoint_elsewhere_goes_through_the_proxy_which_refuses_the_rest(run: Run) -> None:
    socat = shutil.which("socat")
    proxy = "PROXY:127.0.0.1:{}:443,proxyport=18080"
    script = (
        "echo HTTPS_PROXY=$HTTPS_PROXY; "
        f"{socat} -T2 - {proxy.format('evil.example')} </dev/null || echo EVIL-REFUSED"
    )
    output, result = run.run(script, endpoints=(Endpoint("api.example", 443),))
    assert "HTTPS_PROXY=http://127.0.0.1:18080" in output
    assert "EVIL-REFUSED" in output
    assert "network: evil.example:443 refused (not an endpoint of this run)" in result.notes


def test_the_proxy_connects_to_what_it_allows_only(
    tmp_path: Path, listeners: tuple[Listener, Listener, Listener]
) -> None:
    from pytest_plugin_evals.util.relay import Proxy, Target, listen

    allowed, other, _ = listeners
    target = Target("127.0.0.1", allowed.port)  # named: a loopback address is never else
    proxy = listen(tmp_path / "p.sock", Proxy(frozenset({target}), frozenset({target})))
    try:
        for port, answer in ((allowed.port, b"200"), (other.port, b"403")):
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(str(tmp_path / "p.sock"))
                conn.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
                conn.settimeout(30)
                got = b""  # the proxy's answer, and what the target sent after it
                while b"\r\n\r\n" not in got or (answer == b"200" and b"pong" not in got):
                    chunk = conn.recv(64)
                    if not chunk:
                        break
                    got += chunk
                head, _, rest = got.partition(b"\r\n\r\n")
                assert head.split()[1] == answer
                if answer == b"200":
                    assert rest == b"pong\n"
        assert other.seen == 0 and proxy.refused == [f"127.0.0.1:{other.port}"]
    finally:
        proxy.close()


def test_its_memory_is_bounded(run: Run) -> None:
    grow = f"{sys.executable} -c 'x = bytearray(400 * 2**20); import time; time.sleep(30)'"
    output, result = run.run(
        grow, read=(Path(sys.base_prefix), Path(sys.prefix)), bounds=Bounds(memory=100 * 2**20)
    )
    assert result.bound == "the run's memory went over 100 MiB", output
    assert result.duration_seconds < 20


#: A fork bomb that does not give up when a fork is refused.
BOMB = """\
import os, time
end = time.monotonic() + 20
while time.monotonic() < end:
    try:
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
    except OSError:
        time.sleep(0.01)
"""


def test_its_processes_are_bounded(run: Run, tmp_path: Path) -> None:
    (run.home / "bomb.py").write_text(BOMB, encoding="utf-8")
    output, result = run.run(
        f"{sys.executable} -I {run.home / 'bomb.py'}",
        read=(Path(sys.base_prefix), Path(sys.prefix)),
        bounds=Bounds(processes=30),
    )
    assert result.bound == "the run's processes reached 30", output
    assert result.duration_seconds < 15


def test_its_files_and_folders_are_bounded(run: Run) -> None:
    output, result = run.run(
        "head -c 50000000 /dev/zero > big.bin; echo status=$?; sleep 5",
        bounds=Bounds(file_size=10 * 2**20),
    )
    assert "status=" in output and not (run.cwd / "big.bin").stat().st_size > 10 * 2**20
    assert result.bound == "a file of the run reached 10 MiB"
    output, result = run.run(
        "for i in $(seq 30); do head -c 2000000 /dev/zero > f$i; done; sleep 5",
        bounds=Bounds(disk=20 * 2**20),
    )
    assert result.bound == "the run's folders went over 20 MiB", output


def test_sizes_read_and_shown() -> None:
    assert parse_size("4G") == 4 * 2**30 and parse_size("512M") == 512 * 2**20
    assert parse_size("1.5GiB") == 3 * 2**29 and parse_size("2048") == 2048
    for bad in ("", "lots", "-1G", "0"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert show_size(4 * 2**30) == "4 GiB" and show_size(3 * 2**29) == "1.5 GiB"


def test_without_its_tools_the_problem_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    why = confine.problem()
    assert why is not None
    assert "bubblewrap, socat, util-linux (prlimit) are not installed" in why
    assert "apt install bubblewrap socat util-linux" in why and "--eval-unconfined" in why


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


def test_a_version_managers_tools_come_with_their_installation() -> None:
    home = Path("/home/me")
    assert tool_installs(home / ".pyenv" / "shims") == [home / ".pyenv"]
    assert tool_installs(home / ".pyenv" / "plugins" / "pyenv-virtualenv" / "shims") == [
        home / ".pyenv"
    ]
    node = home / ".nvm" / "versions" / "node" / "v20.1.0"
    assert tool_installs(node / "bin") == [node]
    assert tool_installs(home / ".local" / "bin") == []  # never the rest of a home
    assert tool_installs(Path("/usr/bin")) == []


def test_the_watchdog_finds_the_runs_processes_in_its_cgroup_without_listing_the_machine(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each check (four a second) costs the run's few PIDs, not a scan of every process."""
    from pytest_plugin_evals.agents.confine import bounds

    ready = confine.prepare(run.confinement(), ["/bin/sh", "-c", "sleep 2 & sleep 2 & wait"], ENV)
    if ready.cgroup is None:
        ready.close()
        pytest.skip("no pids cgroup here (not root, or no writable pids controller)")
    monkeypatch.setattr(bounds, "_pids", list)  # the machine's list is not looked at
    out = run.root / "out"
    out.mkdir()
    result = ready.run(stdin_text="", cwd=run.cwd, timeout=30, out_dir=out)
    assert result.returncode == 0, result.stderr_tail()
    assert ready.watchdog.peak_processes >= 3  # sh and its two sleeps, at least
    assert ready.watchdog.peak_memory > 0


def test_two_runs_of_one_tag_get_cgroups_of_their_own(run: Run) -> None:
    """Runs of one tag at once (the unit tests' ``unit`` in two xdist workers) each get a
    cgroup of their own: one bound each, and the first to end removes only its own."""
    first = confine.prepare(run.confinement(), ["/bin/true"], ENV)
    second = confine.prepare(run.confinement(), ["/bin/true"], ENV)
    try:
        if first.cgroup is None or second.cgroup is None:
            pytest.skip("no cgroup here (not root, or no writable controller)")
        assert not set(first.cgroup.folders) & set(second.cgroup.folders)
        first.close()
        assert all(folder.is_dir() for folder in second.cgroup.folders)
    finally:
        first.close()
        second.close()


def test_memory_without_a_cgroup_counts_shared_pages_and_memfds() -> None:
    """The count used where no cgroup can be made (an ordinary user): 40 MiB of shared
    anonymous memory and a 40 MiB memfd written but never mapped both count."""
    from pytest_plugin_evals.agents.confine.bounds import run_memory

    hold = (
        "import mmap, os, sys, time\n"
        "m = mmap.mmap(-1, 40 * 2**20, mmap.MAP_SHARED)\n"
        "for i in range(0, 40 * 2**20, 4096): m[i] = 1\n"
        "fd = os.memfd_create('held')\n"
        "for _ in range(40): os.write(fd, bytes(2**20))\n"
        "print('held', flush=True); time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"held\n"
        assert run_memory([proc.pid], 2**20) > 80 * 2**20
        # Within the bound, the resident size (never below the PSS) stands for it.
        assert run_memory([proc.pid], 2**40) > 80 * 2**20
    finally:
        proc.kill()
        proc.communicate()
