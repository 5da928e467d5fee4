"""Streaming a cell's runs into a live view, throttled in the kernel.

While a cell runs the front end processes no messages, so the kernel cannot wait for
acknowledgements; instead it sends at most ``max_rate`` updates a second. The recorder's
subscriber only queues the batch (a list append on the running thread); a ticker thread wakes once
per interval and sends one update with what changed: a reset when the cell moved on to another
session, the tables when placement changed, new run records, the new events, and a snapshot of a
run in flight for longer than an interval (which ops wait, run, are done), so ops change state
while a long run goes on.

A loop of short runs ends more runs per interval than anyone can watch, and building each one's
columns would cost the loop (the ticker takes the GIL from it). So an update carries the record of
every run but the events of only the newest run that ended since the previous update, and says how
many events it skipped; they stay in the session's trace (the cell's ``-o`` variable). Runs longer
than the interval are all sent whole. A view that starts on a session with a history gets the
records of its latest ``RUNS_LISTED`` runs.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from placeviz.contract import RUNS_LISTED, EventKind
from placeviz.events.recorder import EventBatch
from placeviz.inspector.encoding import encode_events
from placeviz.runtime.session import Session

Send = Callable[[dict[str, Any], list[memoryview]], None]


class LiveStream:
    """Sends the events of the sessions it watches to ``send``, at most ``max_rate`` times a
    second; ``close`` sends what is left and stops."""

    def __init__(self, send: Send, origin_ns: int, max_rate: float = 20.0) -> None:
        self._send = send
        self.origin_ns = origin_ns
        self.interval = 1.0 / max_rate
        self._lock = threading.Lock()
        # Appended by running threads, drained by the ticker: deque's append and popleft are
        # atomic, so neither side takes a lock.
        self._pending: deque[tuple[Session, EventBatch]] = deque()
        self._unsubscribe: list[Callable[[], None]] = []
        self._shown: Session | None = None  # the session the view holds events of
        self._next_run = 0  # id of the shown session's first run not yet sent
        self._progress: dict[str, Any] | None = None  # the snapshot the view has
        self._in_flight: int | None = None  # the run in flight at the previous tick
        self.sent = 0  # updates sent, for tests and benchmarks
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="placeviz-live", daemon=True)
        self._ticker.start()

    def watch(self, session: Session) -> None:
        """Stream ``session``'s future events (and its tables, when it first sends any)."""
        callback = lambda batch: self._pending.append((session, batch))  # noqa: E731
        self._unsubscribe.append(session.recorder.subscribe(callback))

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush()

    def flush(self) -> None:
        """Send what has queued and where the run in flight is, as one update (one per session
        when batches of several sessions queued)."""
        with self._lock:
            pending = [self._pending.popleft() for _ in range(len(self._pending))]
            updates = [self._update(session, batches) for session, batches in _by_session(pending)]
            progress = self._long_run_progress()
            if progress != self._progress:
                if not updates:
                    updates.append(({"kind": "update", "count": 0}, []))
                updates[-1][0]["progress"] = progress
                self._progress = progress
            for content, buffers in updates:
                self._send(content, buffers)
                self.sent += 1

    def _long_run_progress(self) -> dict[str, Any] | None:
        """The shown session's run in flight, once it was in flight at the previous tick too: a
        snapshot of a run shorter than the interval would only make the view flicker."""
        session = self._shown
        run = None if session is None else session.run_in_flight
        seen, self._in_flight = self._in_flight, run
        if run is None or run != seen:
            return None  # no snapshot is built for the runs of a fast loop
        progress = session.progress()  # type: ignore[union-attr]
        return progress if progress is not None and progress["run"] == run else None

    def close(self) -> None:
        self._stop.set()
        self._ticker.join()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self.flush()

    def _update(
        self, session: Session, batches: list[EventBatch]
    ) -> tuple[dict[str, Any], list[memoryview]]:
        sent, skipped = _newest_run_only(batches)
        columns = EventBatch.join(sent).columns
        content: dict[str, Any] = {"kind": "update", "count": len(columns["kind"])}
        if skipped:
            content["skipped"] = skipped
        placed = bool((columns["kind"] == int(EventKind.PLACEMENT)).any())
        if session is not self._shown:
            content["reset"] = True
            self._shown, self._next_run, self._progress = session, 0, None
        if placed or "reset" in content:
            tables = session.tables(runs=[])
            content["tables"] = {
                "origin_ns": self.origin_ns,
                "devices": tables["devices"],
                "nodes": tables["nodes"],
                "edges": tables["edges"],
            }
        if "reset" in content:
            runs = session.latest_runs(RUNS_LISTED)
        else:
            runs = session.runs_since(self._next_run)
        if runs:
            content["runs"] = runs
            self._next_run = runs[-1]["id"] + 1
        return content, encode_events(columns, self.origin_ns)


def _newest_run_only(batches: list[EventBatch]) -> tuple[list[EventBatch], int]:
    """Of ``batches``, those not of one run (placement) and the newest run's; and how many events
    the others hold."""
    newest = next((batch for batch in reversed(batches) if batch.run is not None), None)
    sent = [batch for batch in batches if batch.run is None or batch is newest]
    skipped = sum(len(batch) for batch in batches if batch.run is not None and batch is not newest)
    return sent, skipped


def _by_session(pending: list[tuple[Session, EventBatch]]) -> list[tuple[Session, list]]:
    """Consecutive batches of one session grouped, in the order they came."""
    groups: list[tuple[Session, list[EventBatch]]] = []
    for session, batch in pending:
        if groups and groups[-1][0] is session:
            groups[-1][1].append(batch)
        else:
            groups.append((session, [batch]))
    return groups
