"""Two connected sockets joined: bytes copied both ways, in one thread, until both directions
end (:func:`splice`, :mod:`.relay`'s connections)."""

from __future__ import annotations

import contextlib
import select
import socket
from dataclasses import dataclass


@dataclass
class _Way:
    """One direction of a connection: bytes read from ``src`` and not yet sent to ``dst``."""

    src: socket.socket
    dst: socket.socket
    chunk: int
    pending: bytes = b""
    ended: bool = False

    def want(self) -> tuple[int, int]:
        """The descriptor and the event this direction waits for."""
        if self.pending:
            return self.dst.fileno(), select.POLLOUT
        return self.src.fileno(), select.POLLIN

    def step(self) -> None:
        """Send what is pending, else read more; neither blocks."""
        try:
            if not self.pending:
                self.pending = self.src.recv(self.chunk)
                if not self.pending:
                    self.end()
                    return
            self.pending = self.pending[self.dst.send(self.pending) :]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.end()

    def end(self) -> None:
        self.ended, self.pending = True, b""
        with contextlib.suppress(OSError):
            self.dst.shutdown(socket.SHUT_WR)


def splice(a: socket.socket, b: socket.socket, chunk: int) -> None:
    """Copy bytes both ways until both directions end, in this thread. A direction reads again
    only when what it read is sent, so a slow reader holds back its own writer only."""
    a.setblocking(False)
    b.setblocking(False)
    ways = [_Way(a, b, chunk), _Way(b, a, chunk)]
    while not all(way.ended for way in ways):
        poller = select.poll()
        wanted: dict[int, int] = {}
        for way in ways:
            if not way.ended:
                fd, event = way.want()
                wanted[fd] = wanted.get(fd, 0) | event
        for fd, events in wanted.items():
            poller.register(fd, events)
        poller.poll()  # a shutdown (the run's end) wakes it too
        for way in ways:
            if not way.ended:
                way.step()


def close_quietly(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways and close it, whatever state it is in."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
