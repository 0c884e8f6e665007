"""The one channel between the session's processes: a worker reaches the controller's
:class:`~.budget.Budget` over it.

The channel is any object with ``send`` and ``receive(timeout)`` (an execnet channel: under
pytest-xdist the controller opens one on the gateway to each worker, for ``popen``, ``ssh``
and ``socket`` workers alike). A request is a list, ``[operation, *arguments]``; the answer
is one plain value (execnet carries lists, strings, numbers, None). The holder answers at
once (:func:`serve`): no request waits there, so a worker asks again while it waits.

A worker whose channel is closed, or that gets no answer, fails safe: every call then raises
:class:`BudgetGone` with one line, and the worker starts no more runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pytest_plugin_evals.engine.budget import Budget, Granted, Refused, Reservation

#: The key of the channel in a worker's ``workerinput``.
BUDGET_CHANNEL = "eval_budget"
#: What the holder's callback is given when the channel closes (the worker is gone).
CLOSED = "closed"
#: How long a worker waits for an answer (the holder answers at once: this is a lost channel).
ANSWER_SECONDS = 60.0


class BudgetGone(Exception):
    """The session's budget can no longer be reached: no run may start."""


def _reservation(got: Reservation) -> list[Any]:
    if isinstance(got, Granted):
        return ["granted", got.room]
    if isinstance(got, Refused):
        return ["refused", got.reason, got.kind]
    return ["wait"]


def answer(budget: Budget, owner: str, request: Any) -> Any:
    """The answer to one request of the process ``owner`` (its tickets are its own)."""
    operation, *args = request
    if operation == "reserve":
        return _reservation(budget.reserve(f"{owner}/{args[0]}"))
    if operation == "settle":
        budget.settle(f"{owner}/{args[0]}", float(args[1]))
    elif operation == "release":
        budget.release(f"{owner}/{args[0]}")
    elif operation == "take_slot":
        return budget.take_slot(f"{owner}/{args[0]}")
    elif operation == "free_slot":
        budget.free_slot(f"{owner}/{args[0]}")
    elif operation == "pause":
        return budget.pause(float(args[0]), None if args[1] is None else float(args[1]))
    elif operation == "refused":
        refused = budget.refused()
        return None if refused is None else [refused.reason, refused.kind]
    elif operation in ("spent", "pause_left", "paused_seconds"):
        return getattr(budget, operation)()
    else:
        raise ValueError(f"unknown request {operation!r}")
    return None


def serve(budget: Budget, channel: Any, owner: str) -> Callable[[Any], None]:
    """The callback the holder sets on the channel to the process ``owner``: each request
    answered at once; once the channel closes, the process's reservations and slots are
    given back."""

    def callback(message: Any) -> None:
        if message == CLOSED:
            budget.forget(owner)
            return
        try:
            got = answer(budget, owner, message)
        except (TypeError, ValueError, IndexError) as exc:
            got = ["error", f"{type(exc).__name__}: {exc}"]
        channel.send(got)

    return callback


class RemoteBudget:
    """A worker's side: the same calls as :class:`~.budget.Budget` (but :meth:`Budget.forget`),
    each one request over the channel, one at a time (the worker's threads share it)."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel
        self._lock = threading.Lock()
        #: Why the budget cannot be reached, once a call found out.
        self.gone: str | None = None if channel is not None else "no channel to the controller"

    def _ask(self, *request: Any) -> Any:
        with self._lock:
            if self.gone is None:
                try:
                    self.channel.send(list(request))
                    got = self.channel.receive(timeout=ANSWER_SECONDS)
                except Exception as exc:  # noqa: BLE001 - closed, timed out, execnet's RemoteError
                    self.gone = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
                except BaseException:  # Ctrl-C while asking: a late answer would be misread
                    self.gone = "interrupted while asking"
                    raise
                else:
                    if not (isinstance(got, list) and got[:1] == ["error"]):
                        return got
                    self.gone = str(got[1])
            raise BudgetGone(
                f"run not started: the session's controller cannot be reached ({self.gone})"
            )

    def reserve(self, ticket: str) -> Reservation:
        got = self._ask("reserve", ticket)
        if got[0] == "granted":
            return Granted(None if got[1] is None else float(got[1]))
        if got[0] == "refused":
            return Refused(str(got[1]), str(got[2]))
        return None

    def settle(self, ticket: str, usd: float) -> None:
        self._ask("settle", ticket, float(usd))

    def release(self, ticket: str) -> None:
        self._ask("release", ticket)

    def take_slot(self, ticket: str) -> bool:
        return bool(self._ask("take_slot", ticket))

    def free_slot(self, ticket: str) -> None:
        self._ask("free_slot", ticket)

    def pause(self, seconds: float, limit: float | None = None) -> float | None:
        got = self._ask("pause", float(seconds), limit)
        return None if got is None else float(got)

    def refused(self) -> Refused | None:
        got = self._ask("refused")
        return None if got is None else Refused(str(got[0]), str(got[1]))

    def spent(self) -> float:
        return float(self._ask("spent"))

    def pause_left(self) -> float:
        return float(self._ask("pause_left"))

    def paused_seconds(self) -> float:
        return float(self._ask("paused_seconds"))


#: The budget as a process making runs reaches it: itself (``-n 0``), or over the channel.
Reachable = Budget | RemoteBudget
