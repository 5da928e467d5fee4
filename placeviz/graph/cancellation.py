"""Cancelling runs that wait (TF's CancellationManager): a kernel that blocks until another run
acts (a queue's dequeue, an accumulator's take) waits through ``wait``, so that closing the
session, or a cluster master ending a step, wakes it with ``CancelledError``.

The cancellations a kernel sees are its thread's: the session enters its own around the run,
and a cluster task's step enters one around the session's run of the step's ops.
"""

from __future__ import annotations

import threading

from placeviz.errors import CancelledError
from placeviz.graph.core import Operation


class Cancellation:
    """Set once; every condition a kernel waits on under it is woken then. ``with`` it around
    a run: kernels the run's thread runs wait under it (no object made per run: a session's
    hot path enters its own)."""

    def __init__(self) -> None:
        self.cancelled = False
        self._lock = threading.Lock()
        self._waiting: set[threading.Condition] = set()

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            waiting = list(self._waiting)
        for condition in waiting:
            with condition:
                condition.notify_all()

    def __enter__(self) -> Cancellation:
        stack = getattr(_current, "stack", None)
        if stack is None:
            stack = _current.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _current.stack.pop()

    def _enter(self, condition: threading.Condition) -> None:
        with self._lock:
            self._waiting.add(condition)

    def _leave(self, condition: threading.Condition) -> None:
        with self._lock:
            self._waiting.discard(condition)


_current = threading.local()  # per thread: the cancellations entered, innermost last


def wait(condition: threading.Condition, op: Operation) -> None:
    """``condition.wait()`` (the caller holds it) that a cancellation of this thread's run
    ends with TF's ``CancelledError``: any of those entered, a cluster task's step as well as
    the session inside it that runs the step's ops."""
    entered = getattr(_current, "stack", None)
    if not entered:
        condition.wait()
        return
    for cancellation in entered:
        cancellation._enter(condition)
    try:
        if not any(c.cancelled for c in entered):
            condition.wait()
    finally:
        for cancellation in entered:
            cancellation._leave(condition)
    if any(c.cancelled for c in entered):
        raise CancelledError("Step was cancelled by an explicit call to `Session::Close()`.", op=op)
