"""The relay's bounds: a run's connections at once, and no thread left behind when it ends."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_plugin_evals.util.relay import Target, listen

#: The connections a run holds at once (the default).
MAX_CONNECTIONS = 64


def relay_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("evals-relay")]


@pytest.fixture
def silent_server() -> Iterator[socket.socket]:
    """A loopback endpoint that never accepts: the kernel completes each connection and
    queues it, so every relayed connection stays open until the relay ends it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1024)
    yield server
    server.close()


def is_closed(conn: socket.socket) -> bool:
    try:
        return conn.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def connect_many(path: Path, count: int, clients: list[socket.socket]) -> None:
    for _ in range(count):
        client = socket.socket(socket.AF_UNIX)
        clients.append(client)
        client.connect(str(path))  # blocking: waits while the listener's backlog is full
        client.setblocking(False)


def wait_for(check: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the relay did not settle"
        time.sleep(0.05)


def test_a_run_holds_at_most_its_limit_and_refuses_the_rest_at_once(
    tmp_path: Path, silent_server: socket.socket
) -> None:
    before = threading.active_count()
    port = silent_server.getsockname()[1]
    listener = listen(tmp_path / "r.sock", Target("127.0.0.1", port))
    clients: list[socket.socket] = []
    most = 0
    try:
        connect_many(tmp_path / "r.sock", 300, clients)

        def settled() -> bool:
            nonlocal most
            most = max(most, threading.active_count())
            # One thread per held connection, one accepting: never one per connection made.
            assert most <= before + MAX_CONNECTIONS + 2, f"{len(relay_threads())} threads"
            return sum(is_closed(c) for c in clients) >= 300 - MAX_CONNECTIONS

        wait_for(settled)
        time.sleep(0.3)
        assert settled()
        open_now = [c for c in clients if not is_closed(c)]
        assert len(open_now) == MAX_CONNECTIONS
        assert listener.gate.turned_away == 300 - MAX_CONNECTIONS  # counted, for the note
    finally:
        listener.close()
        for client in clients:
            client.close()
    # Closing ended every connection and every thread it had.
    assert relay_threads() == []


def test_closing_ends_the_connections_it_holds_and_their_threads(
    tmp_path: Path, silent_server: socket.socket
) -> None:
    port = silent_server.getsockname()[1]
    listener = listen(tmp_path / "r.sock", Target("127.0.0.1", port))
    clients: list[socket.socket] = []
    try:
        connect_many(tmp_path / "r.sock", 10, clients)
        wait_for(lambda: len(relay_threads()) == 11)
        listener.close()
        assert relay_threads() == []
        wait_for(lambda: all(is_closed(c) for c in clients), 5)
        assert listener.gate.held == 0
    finally:
        listener.close()
        for client in clients:
            client.close()


def test_a_big_exchange_goes_both_ways_through_one_thread(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def echo() -> None:
        conn, _ = server.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    listener = listen(tmp_path / "r.sock", Target("127.0.0.1", server.getsockname()[1]))
    payload = os.urandom(8 * 2**20)
    try:
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(tmp_path / "r.sock"))
            client.settimeout(30)

            def send() -> None:
                client.sendall(payload)
                client.shutdown(socket.SHUT_WR)

            sender = threading.Thread(target=send)
            sender.start()
            got = bytearray()
            while chunk := client.recv(65536):
                got += chunk
            sender.join()
        assert bytes(got) == payload
    finally:
        listener.close()
        server.close()
    assert relay_threads() == []
