"""``--eval-max-cost-usd``: whether one more run may start, written once for every caller (the
run-making of each process, and ``--eval-runs auto``'s rounds on the controller)."""

from __future__ import annotations

from dataclasses import dataclass

#: The recorded reason of a run the cost ceiling kept from starting.
COST_CEILING = "cost_ceiling"


@dataclass(frozen=True)
class Refused:
    """A run that may not start: the line said, and the kind recorded."""

    reason: str
    kind: str = COST_CEILING


@dataclass(frozen=True)
class Budget:
    """The session's cost ceiling in USD (None: no ceiling)."""

    ceiling: float | None

    def refusal(self, spent: float, flying: int, each: float) -> Refused | None:
        """Why no run may start, given what was spent, the runs in flight and what a run is
        expected to cost each: the ceiling is reached, or the runs in flight would reach it
        (None: one may start)."""
        ceiling = self.ceiling
        if ceiling is None:
            return None
        if spent >= ceiling:
            return Refused(
                f"cost ceiling ${ceiling:g} reached (${spent:.4f} spent): run not started"
            )
        if flying and spent + flying * each >= ceiling:
            return Refused(
                f"cost ceiling ${ceiling:g} would be reached (${spent:.4f} spent, {flying} "
                f"run(s) in flight at about ${each:.4f} each): run not started"
            )
        return None
