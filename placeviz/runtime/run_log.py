"""A session's record of what happened: its runs, their events, and every placement.

Kept apart from running: the executor only hands each finished run's clocks here, and a trace
or a live view reads from here, from another thread too.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from placeviz.contract import COLUMN_DEFAULTS, COLUMN_NAMES, EventKind, TimingSource
from placeviz.events.recorder import DTYPES, EventBatch, Recorder
from placeviz.runtime.executor import CompiledPlan
from placeviz.runtime.remote import RemoteEvents
from placeviz.runtime.tracing import PlanColumns, record_card_memory, record_run, run_event

_MAX_RUNS_KEPT = 100_000
clock = time.perf_counter_ns

Prepared = tuple[CompiledPlan, PlanColumns]


class RunStart(NamedTuple):
    id: int
    since: int  # the recorder's cursor when the run began
    t0: int


class RunLog:
    """Run records (the newest 100,000), the recorder of their events, and placement events."""

    def __init__(self) -> None:
        self.recorder = Recorder()
        self._runs: deque[dict[str, Any]] = deque(maxlen=_MAX_RUNS_KEPT)
        self._cursors: deque[int] = deque(maxlen=_MAX_RUNS_KEPT)  # recorder cursor per run
        self._started = 0
        self._in_flight: tuple[RunStart, Prepared] | None = None
        # Every placement event, and the allocation of every variable's value, kept here too: a
        # trace shows them all even after the recorder rolled their events over. One chunk per
        # call, and its recorder cursor (chunks are joined only when a trace reads them: eager
        # mode places once per op).
        self._kept: list[dict[str, np.ndarray]] = []
        self._kept_cursors: list[int] = []

    # -- runs ------------------------------------------------------------------------------------
    def start(self, prepared: Prepared) -> RunStart:
        run = RunStart(self._started, self.recorder.total, clock())
        self._started += 1
        self._in_flight = (run, prepared)
        return run

    def finish(
        self,
        prepared: Prepared,
        run: RunStart,
        failed_step: int | None,
        error: str | None,
        feeds: Any,
        card_readings: Sequence[tuple[int, int, int]] = (),
    ) -> None:
        """Record a run that ended; ``feeds`` are its fed values (their shapes time the steps of
        a simulated GPU whose shapes only the run knows); ``card_readings`` what the real GPUs
        said of their memory meanwhile (nvml.py)."""
        self._in_flight = None
        t_end = clock()
        compiled, columns = prepared
        record_run(self.recorder, compiled, columns, run.id, run.t0, t_end, failed_step, feeds)
        record_card_memory(self.recorder, card_readings, run.id)
        fetches = list(columns.fetch_names)
        dry = compiled.dry is not None
        self._ended(run, t_end, error, fetches, dry, compiled.unread, compiled.folded)

    def add_run(
        self,
        t0: int,
        t1: int,
        error: str | None,
        fetches: Sequence[Any],
        events: RemoteEvents,
    ) -> None:
        """A run executed elsewhere (a cluster's tasks), its events built when first read."""
        run = RunStart(self._started, self.recorder.total, t0)
        self._started += 1
        self.recorder.extend_later(events.count, lambda: {**events.build(), "run": run.id})
        run_event(self.recorder, t0, t1, run.id, int(TimingSource.CLOCK))
        self._ended(run, t1, error, [fetch.name for fetch in fetches])

    def _ended(
        self,
        run: RunStart,
        t1: int,
        error: str | None,
        fetches: list[str],
        dry: bool = False,
        unread: Sequence[int] = (),
        folded: Sequence[int] = (),
    ) -> None:
        """Keep the run's record and where its events start, and tell the subscribers."""
        self._cursors.append(run.since)
        record = {
            "id": run.id,
            "t0": run.t0,
            "t1": t1,
            "status": "ok" if error is None else "error",
            "error": error,
            "fetches": fetches,
        }
        if dry:
            record["dry"] = True
        if unread:
            record["unread"] = unread  # the plan's, shared by its runs
        if folded:
            record["folded"] = folded
        self._runs.append(record)
        self.recorder.publish(run.since, run.id)

    def last_run_batch(self) -> EventBatch:
        """The events of the newest finished run (none: an empty batch)."""
        since = self._cursors[-1] if self._cursors else self.recorder.total
        return self.recorder.batch(since)

    @property
    def last(self) -> dict[str, Any] | None:
        return self._runs[-1] if self._runs else None

    @property
    def in_flight(self) -> int | None:
        flight = self._in_flight
        return None if flight is None else flight[0].id

    def records(self) -> list[dict[str, Any]]:
        return [*self._runs]

    def latest(self, count: int) -> list[dict[str, Any]]:
        """Records of the newest ``count`` finished runs, oldest first."""
        return list(itertools.islice(reversed(self._runs), count))[::-1]

    def since(self, run_id: int) -> list[dict[str, Any]]:
        """Records of the finished runs with ids from ``run_id`` on (read from the newest end)."""
        newer = []
        for record in reversed(self._runs):
            if record["id"] < run_id:
                break
            newer.append(record)
        return newer[::-1]

    def progress(self) -> dict[str, Any] | None:
        """The run in flight: node ids of its ops waiting, running and done, read from the
        plan's step clocks (steps stamp their end; a parallel run also their start)."""
        flight = self._in_flight
        if flight is None:
            return None
        run, (compiled, columns) = flight
        ops = columns.clocked_ops
        done = np.asarray(compiled.ends) >= run.t0
        starts = compiled.starts
        if starts is not None and compiled.parallel:
            running = (np.asarray(starts) >= run.t0) & ~done & ops
        else:  # one stream: the first op step not done yet is the one running
            running = np.zeros_like(done)
            left = np.flatnonzero(ops & ~done)
            if len(left):
                running[left[0]] = True
        nodes = columns.nodes
        return {
            "run": run.id,
            "waiting": nodes[ops & ~done & ~running].tolist(),
            "running": nodes[running].tolist(),
            "done": nodes[ops & done].tolist(),
        }

    # -- events ----------------------------------------------------------------------------------
    def record_placements(self, nodes: list[int], devices: list[int]) -> None:
        self._record_kept(EventKind.PLACEMENT, nodes, devices, [0] * len(nodes))

    def record_variables(self, nodes: list[int], devices: list[int], sizes: list[int]) -> None:
        """Variables' values now held on their devices, for the session's life: an ALLOC each
        that no FREE follows (recorded before the first fully traced run that holds them)."""
        self._record_kept(EventKind.ALLOC, nodes, devices, sizes)

    def _record_kept(
        self, kind: EventKind, nodes: list[int], devices: list[int], sizes: list[int]
    ) -> None:
        count = len(nodes)
        now = clock()
        since = self.recorder.total
        chunk = {
            "kind": np.full(count, int(kind), DTYPES["kind"]),
            "t0": np.full(count, now, DTYPES["t0"]),
            "t1": np.full(count, now, DTYPES["t1"]),
            "node": np.array(nodes, DTYPES["node"]),
            "device": np.array(devices, DTYPES["device"]),
            "stream": np.full(count, -1, DTYPES["stream"]),
            "bytes": np.array(sizes, DTYPES["bytes"]),
            "source": np.zeros(count, DTYPES["source"]),
            "run": np.full(count, -1, DTYPES["run"]),
            "peer": np.full(count, -1, DTYPES["peer"]),
            # kept whole (events() concatenates them): the loop columns' defaults too
            **{
                name: np.full(count, value, DTYPES[name]) for name, value in COLUMN_DEFAULTS.items()
            },
        }
        if count:
            self._kept.append(chunk)
            self._kept_cursors.append(since)
        self.recorder.extend(count, chunk)
        self.recorder.publish(since)

    def events(self, runs: int | None) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
        """The last ``runs`` run records (None: all kept) and their events, after every
        placement made, and variable allocated, before them."""
        count = len(self._runs)
        # Indexing from the end: a deque reaches its last items in constant time.
        kept = (
            [self._runs[i] for i in range(max(count - runs, 0), count)] if runs else [*self._runs]
        )
        batch = self.recorder.batch(self._cursors[-len(kept)] if kept and runs else 0)
        earlier = self._kept[: bisect.bisect_left(self._kept_cursors, batch.start)]
        recent = batch.columns
        columns = {
            name: np.concatenate([*(chunk[name] for chunk in earlier), recent[name]])
            for name in COLUMN_NAMES
        }
        return kept, columns
