"""Cancelling runs that wait (TF's CancellationManager): a kernel that blocks until another run
acts (a queue's dequeue, an accumulator's take) waits through ``wait``, so that closing the
session, or a cluster master ending a step, wakes it with ``CancelledError``.

The cancellation a kernel sees is its thread's: the session (or a cluster task's step) enters it
around the run.
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
    ends with TF's ``CancelledError``."""
    stack = getattr(_current, "stack", None)
    cancellation = stack[-1] if stack else None
    if cancellation is None:
        condition.wait()
        return
    cancellation._enter(condition)
    try:
        if not cancellation.cancelled:
            condition.wait()
    finally:
        cancellation._leave(condition)
    if cancellation.cancelled:
        raise CancelledError("Step was cancelled by an explicit call to `Session::Close()`.", op=op)
