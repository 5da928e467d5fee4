"""Cancelling runs that wait (TF's CancellationManager): a kernel that blocks until another run
acts (a queue's dequeue, an accumulator's take) waits through ``wait``, so that closing the
session, or a cluster master ending a step, wakes it with ``CancelledError``.

The cancellation a kernel sees is its thread's: the session (or a cluster task's step) sets it
around the run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from placeviz.errors import CancelledError
from placeviz.graph.core import Operation


class Cancellation:
    """Set once; every condition a kernel waits on under it is woken then."""

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

    def _enter(self, condition: threading.Condition) -> None:
        with self._lock:
            self._waiting.add(condition)

    def _leave(self, condition: threading.Condition) -> None:
        with self._lock:
            self._waiting.discard(condition)


_current = threading.local()


@contextlib.contextmanager
def cancelled_by(cancellation: Cancellation) -> Iterator[None]:
    """Kernels run on this thread inside wait under ``cancellation``."""
    outer = getattr(_current, "cancellation", None)
    _current.cancellation = cancellation
    try:
        yield
    finally:
        _current.cancellation = outer


def wait(condition: threading.Condition, op: Operation) -> None:
    """``condition.wait()`` (the caller holds it) that a cancellation of this thread's run
    ends with TF's ``CancelledError``."""
    cancellation: Cancellation | None = getattr(_current, "cancellation", None)
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
