"""The event recorder: columnar, appended a run at a time, materialized only when read.

A run's events arrive as one chunk of columns: plan-invariant columns (which op each step runs,
on which device) are shared with the plan rather than copied, and a column that is one value for
the whole chunk (the run id) is stored as that value. Recording a run therefore costs a few
pointer stores whatever its size; reading (``batch``) concatenates chunks into NumPy columns.
A chunk may also be its count and how to build it (a cluster step's, from its tasks' reports),
built when first read.
Subscribers are called with each new batch (the inspector streams from them). Past
``max_events`` the oldest chunks roll over, so a training loop cannot fill memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np

from placeviz.contract import COLUMN_DEFAULTS, COLUMN_NAMES, EVENT_COLUMNS

DTYPES = {column.name: column.dtype for column in EVENT_COLUMNS}
Column = Sequence[int] | np.ndarray | int  # an int: the same value for every event of the chunk


class EventBatch:
    """Events from cursor ``start`` on (see ``Recorder.total``), as NumPy columns; ``run`` is the
    id of the run whose events they are (None: not one run's, e.g. placement).

    The columns are built on first read: a subscriber that only queues a batch costs the run that
    published it a few pointer copies (the live inspector reads its queue a few times a second).
    Chunks never change once recorded, so a batch may be read on another thread.
    """

    def __init__(
        self, start: int, parts: list[tuple[_Chunk, int, int]], run: int | None = None
    ) -> None:
        self.start = start
        self.run = run
        self._parts = parts  # (chunk, lo, hi) in cursor order

    def __len__(self) -> int:
        return sum(hi - lo for _, lo, hi in self._parts)

    @classmethod
    def join(cls, batches: Sequence[EventBatch]) -> EventBatch:
        """Consecutive batches as one, so their columns are built in one pass."""
        parts = [part for batch in batches for part in batch._parts]
        return cls(batches[0].start if batches else 0, parts)

    @cached_property
    def columns(self) -> dict[str, np.ndarray]:
        # One slice assignment per chunk and column: lists, arrays and single values alike are
        # converted by NumPy's C loops, with no intermediate arrays to concatenate.
        size = len(self)
        columns = {name: np.empty(size, dtype=DTYPES[name]) for name in COLUMN_NAMES}
        at = 0
        for chunk, lo, hi in self._parts:
            end = at + hi - lo
            for name in COLUMN_NAMES:
                columns[name][at:end] = chunk.take(name, slice(lo, hi))
            at = end
        return columns

    def rows(self, names: Sequence[str], keep: np.ndarray) -> np.ndarray:
        """Columns ``names`` of the events whose kind ``keep`` marks (a bool per kind), as the
        rows of one int64 array, built straight from the chunks: a chunk of one kind that is
        not kept (a run's own event) is skipped whole, and no other column is built."""
        picked: list[tuple[_Chunk, slice | np.ndarray, int]] = []  # (chunk, its kept, count)
        for chunk, lo, hi in self._parts:
            kind = chunk.columns["kind"]
            if isinstance(kind, int):  # one kind for the chunk (a run's own event)
                if keep[kind]:
                    picked.append((chunk, slice(lo, hi), hi - lo))
                continue
            kept = keep[np.asarray(kind[lo:hi], np.intp)]
            if kept.all():
                picked.append((chunk, slice(lo, hi), hi - lo))
            elif kept.any():
                where = np.flatnonzero(kept) + lo
                picked.append((chunk, where, len(where)))
        rows = np.empty((len(names), sum(count for _, _, count in picked)), np.int64)
        at = 0
        for chunk, which, count in picked:
            for row, name in zip(rows, names):
                row[at : at + count] = chunk.take(name, which)
            at += count
        return rows


class _Chunk:
    __slots__ = ("_build", "_columns", "size", "start")

    def __init__(
        self,
        start: int,
        size: int,
        columns: dict[str, Column] | None,
        build: Callable[[], dict[str, Column]] | None = None,
    ) -> None:
        self.start = start  # cursor of its first event
        self.size = size
        self._columns = columns
        self._build = build  # when ``columns`` is None: makes them, once, on first read

    @property
    def columns(self) -> dict[str, Column]:
        if self._columns is None:
            assert self._build is not None
            columns = self._build()
            kind = columns["kind"]
            if not isinstance(kind, int) and len(kind) != self.size:
                raise RuntimeError(f"Events built later: {self.size} promised, not as many made")
            self._columns, self._build = columns, None
        return self._columns

    def take(self, name: str, which: slice | np.ndarray) -> int | Column:
        """Column ``name`` at ``which`` (a slice, or an index array) of its events: a single
        value stays one (NumPy broadcasts it), a default column left out is its default."""
        value = self.columns.get(name, COLUMN_DEFAULTS.get(name))
        if isinstance(value, int):
            return value
        return value[which] if isinstance(which, slice) else np.asarray(value)[which]


class Recorder:
    """Columnar, append-only (with rollover) store of one session's events."""

    def __init__(self, max_events: int = 2_000_000) -> None:
        self.max_events = max_events
        self._chunks: deque[_Chunk] = deque()
        self._size = 0  # events held
        self._total = 0  # events ever recorded: the cursor subscribers use
        self._subscribers: list[Callable[[EventBatch], None]] = []

    def __len__(self) -> int:
        return self._size

    @property
    def total(self) -> int:
        return self._total

    def extend(self, size: int, columns: dict[str, Column]) -> None:
        """``size`` events as columns; the recorder keeps the sequences, so do not mutate them.
        A column with a contract default (a loop's frame and iteration) may be left out."""
        if size:
            self._add(_Chunk(self._total, size, columns))

    def extend_later(self, size: int, build: Callable[[], dict[str, Column]]) -> None:
        """``size`` events whose columns ``build`` makes when they are first read: a step whose
        events nobody reads (they roll over unread) never pays for them. ``build`` must make
        exactly ``size`` events."""
        if size:
            self._add(_Chunk(self._total, size, None, build))

    def _add(self, chunk: _Chunk) -> None:
        self._chunks.append(chunk)
        self._size += chunk.size
        self._total += chunk.size

    def publish(self, since_total: int, run: int | None = None) -> None:
        """Hand the events recorded since ``since_total`` (those of ``run``, when it is one run's)
        to subscribers, then roll over."""
        if self._subscribers and self._total > since_total:
            batch = self.batch(since_total)
            batch.run = run
            for subscriber in list(self._subscribers):
                subscriber(batch)
        while self._size > self.max_events and len(self._chunks) > 1:
            self._size -= self._chunks.popleft().size

    def subscribe(self, callback: Callable[[EventBatch], None]) -> Callable[[], None]:
        """Call ``callback`` with each new batch; returns the function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def batch(self, since_total: int = 0, until_total: int | None = None) -> EventBatch:
        """The events still held between cursors ``since_total`` and ``until_total``."""
        until = self._total if until_total is None else until_total
        parts: list[tuple[_Chunk, int, int]] = []
        for chunk in reversed(self._chunks):  # recent events are read most, so start there
            if chunk.start >= until:
                continue
            if chunk.start + chunk.size <= since_total:
                break
            lo = max(since_total - chunk.start, 0)
            parts.append((chunk, lo, min(until - chunk.start, chunk.size)))
        parts.reverse()
        start = parts[0][0].start + parts[0][1] if parts else self._total
        return EventBatch(start, parts)
