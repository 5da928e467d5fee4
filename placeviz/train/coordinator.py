"""TF1's ``tf.train.Coordinator``: one stop flag for a group of threads (queue runners), and the
first error any of them reported, raised again by ``join``."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType

from placeviz.errors import OutOfRangeError

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Coordinator:
    """Threads poll ``should_stop``; any of them may ``request_stop``, with the error that ended
    it; ``join`` waits for them and raises that error (OutOfRangeError, the end of input, and
    the ``clean_stop_exception_types`` are a clean stop)."""

    def __init__(self, clean_stop_exception_types: Iterable[type[BaseException]] | None = None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: ExcInfo | None = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def request_stop(self, ex: BaseException | ExcInfo | None = None) -> None:
        """Ask every thread to stop; the first error given is the one ``join`` raises."""
        with self._lock:
            if self._joined and ex is not None:
                raise RuntimeError("Coordinator already joined; no more stop requests.")
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    info = ex if isinstance(ex, tuple) else _exc_info(ex)
                    if not isinstance(info[1], self._clean_stop_exception_types):
                        self._exc_info_to_raise = info
                self._stop_event.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Any error raised inside requests a stop with it (the block's thread then ends)."""
        try:
            yield
        except Exception as ex:  # TF: every error stops the group
            self.request_stop(ex)

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Wait for a stop request, then for the threads (those registered too); raises the
        error that was reported, or a RuntimeError naming threads still running after the
        grace period."""
        waiting = set(threads or ()) | self._registered_threads
        self._stop_event.wait()
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in waiting:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = sorted(t.name for t in waiting if t.is_alive())
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1].with_traceback(self._exc_info_to_raise[2])
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(alive)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        with self._lock:
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1].with_traceback(self._exc_info_to_raise[2])


def _exc_info(ex: BaseException) -> ExcInfo:
    current = sys.exc_info()
    if current[1] is ex:
        return current  # type: ignore[return-value]
    return type(ex), ex, ex.__traceback__
