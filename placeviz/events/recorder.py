"""The event recorder: one list per column, appended in bulk after each run.

During a run the executor writes op timestamps into per-plan lists and nothing else; afterwards a
whole run's events are added with one ``extend`` per column, so recording costs a few list
operations per event. Subscribers are called with each new batch (the inspector streams from
them). Past ``max_events`` the oldest events roll over, so a training loop cannot fill memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

COLUMNS = ("kind", "t0", "t1", "node", "device", "stream", "bytes", "source", "run", "peer")
_DTYPES = {
    "kind": np.int8,
    "t0": np.int64,
    "t1": np.int64,
    "node": np.int32,
    "device": np.int16,
    "stream": np.int16,
    "bytes": np.int64,
    "source": np.int8,
    "run": np.int32,
    "peer": np.int16,
}


@dataclass(frozen=True)
class EventBatch:
    """Events start..stop of the recorder, as NumPy columns."""

    start: int
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.columns["kind"])


class Recorder:
    """Columnar, append-only (with rollover) store of one session's events."""

    def __init__(self, max_events: int = 2_000_000) -> None:
        self.max_events = max_events
        self._columns: dict[str, list[int]] = {name: [] for name in COLUMNS}
        self._dropped = 0  # events rolled over since the session began
        self._subscribers: list[Callable[[EventBatch], None]] = []

    def __len__(self) -> int:
        return len(self._columns["kind"])

    @property
    def total(self) -> int:
        """Events ever recorded, including rolled-over ones: a cursor for subscribers."""
        return self._dropped + len(self)

    def append(
        self,
        kind: int,
        t0: int,
        t1: int = 0,
        node: int = -1,
        device: int = -1,
        stream: int = -1,
        nbytes: int = 0,
        source: int = 0,
        run: int = -1,
        peer: int = -1,
    ) -> None:
        """One event; for the rare kinds (placement, run). Runs of ops go through ``extend``."""
        c = self._columns
        c["kind"].append(kind)
        c["t0"].append(t0)
        c["t1"].append(t1)
        c["node"].append(node)
        c["device"].append(device)
        c["stream"].append(stream)
        c["bytes"].append(nbytes)
        c["source"].append(source)
        c["run"].append(run)
        c["peer"].append(peer)

    def extend(self, columns: dict[str, Iterable[int]]) -> None:
        """Many events at once: every column's iterable must have the same length."""
        for name in COLUMNS:
            self._columns[name].extend(columns[name])

    def publish(self, since_total: int) -> None:
        """Hand the events recorded since ``since_total`` to subscribers, then roll over."""
        if self._subscribers and self.total > since_total:
            batch = self.batch(since_total)
            for subscriber in list(self._subscribers):
                subscriber(batch)
        overflow = len(self) - self.max_events
        if overflow > 0:
            for column in self._columns.values():
                del column[:overflow]
            self._dropped += overflow

    def subscribe(self, callback: Callable[[EventBatch], None]) -> Callable[[], None]:
        """Call ``callback`` with each new batch; returns the function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def batch(self, since_total: int = 0, until_total: int | None = None) -> EventBatch:
        start = max(since_total - self._dropped, 0)
        stop = len(self) if until_total is None else max(until_total - self._dropped, start)
        return EventBatch(
            start=start + self._dropped,
            columns={
                name: np.asarray(self._columns[name][start:stop], dtype=_DTYPES[name])
                for name in COLUMNS
            },
        )

    def column_dtypes(self) -> dict[str, Any]:
        return dict(_DTYPES)
