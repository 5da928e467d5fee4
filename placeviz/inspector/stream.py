"""Streaming a cell's runs into a live view, throttled in the kernel.

While a cell runs the front end processes no messages, so the kernel cannot wait for
acknowledgements; instead it sends at most ``max_rate`` updates a second. The recorder's
subscriber only queues the batch (cheap, on the running thread); encoding and sending happen at
most once per interval, on the caller's thread when the interval has passed, else on a timer that
sends what has queued by then. Each update carries what changed: a reset when the cell moved on to
another session, the tables when placement changed, new run records, and the new events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from placeviz.events.kinds import EventKind
from placeviz.events.recorder import EventBatch
from placeviz.inspector.encoding import encode_events
from placeviz.runtime.session import Session

Send = Callable[[dict[str, Any], list[memoryview]], None]


class LiveStream:
    """Sends the events of the sessions it watches to ``send``, at most ``max_rate`` times a
    second; ``close`` sends what is left and stops watching."""

    def __init__(
        self,
        send: Send,
        origin_ns: int,
        max_rate: float = 20.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self.origin_ns = origin_ns
        self.interval = 1.0 / max_rate
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: list[tuple[Session, EventBatch]] = []
        self._last_sent = -float("inf")
        self._timer: threading.Timer | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self._shown: Session | None = None  # the session the view holds events of
        self._next_run = 0  # id of the shown session's first run not yet sent
        self.sent = 0  # updates sent, for tests and benchmarks

    def watch(self, session: Session) -> None:
        """Stream ``session``'s future events (and its tables, when it first sends any)."""
        callback = lambda batch: self._queue(session, batch)  # noqa: E731
        self._unsubscribe.append(session.recorder.subscribe(callback))

    def _queue(self, session: Session, batch: EventBatch) -> None:
        with self._lock:
            self._pending.append((session, batch))
            wait = self._last_sent + self.interval - self._clock()
            if wait > 0:
                if self._timer is None:
                    self._timer = threading.Timer(wait, self.flush)
                    self._timer.daemon = True
                    self._timer.start()
                return
        self.flush()

    def flush(self) -> None:
        """Send what has queued, as one update per session it came from."""
        with self._lock:
            pending, self._pending = self._pending, []
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not pending:
                return
            self._last_sent = self._clock()
            for session, batches in _by_session(pending):
                self._send_update(session, batches)

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self.flush()

    def _send_update(self, session: Session, batches: list[EventBatch]) -> None:
        columns = EventBatch.join(batches).columns
        content: dict[str, Any] = {"kind": "update", "count": len(columns["kind"])}
        placed = bool((columns["kind"] == int(EventKind.PLACEMENT)).any())
        if session is not self._shown:
            content["reset"] = True
            self._shown, self._next_run = session, 0
        if placed or "reset" in content:
            tables = session.tables(runs=[])
            content["tables"] = {
                "origin_ns": self.origin_ns,
                "devices": tables["devices"],
                "nodes": tables["nodes"],
                "edges": tables["edges"],
            }
        runs = session.runs_since(self._next_run)
        if runs:
            content["runs"] = runs
            self._next_run = runs[-1]["id"] + 1
        self._send(content, encode_events(columns, self.origin_ns))
        self.sent += 1


def _by_session(pending: list[tuple[Session, EventBatch]]) -> list[tuple[Session, list]]:
    """Consecutive batches of one session grouped, in the order they came."""
    groups: list[tuple[Session, list[EventBatch]]] = []
    for session, batch in pending:
        if groups and groups[-1][0] is session:
            groups[-1][1].append(batch)
        else:
            groups.append((session, [batch]))
    return groups
