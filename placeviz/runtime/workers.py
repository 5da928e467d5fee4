"""One worker thread per device stream, owned by a session and reused by every run.

A run hands each stream's compiled function to that stream's worker and waits. Workers live as
long as their session (``close``, or the session's finalizer, stops and joins them), so failing
or interrupted runs, and sessions never closed, leave no threads behind.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from placeviz.runtime.denormals import flush_in_this_thread

_STOP = object()


class _Worker:
    def __init__(self, name: str) -> None:
        self.jobs: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name=f"placeviz {name}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        flush_in_this_thread()  # as TensorFlow's pool threads: denormals are zero
        while True:
            job = self.jobs.get()
            if job is _STOP:
                return
            job()  # type: ignore[operator]
            del job  # drop the run's values now, not when the next job arrives


class StreamWorkers:
    """Threads by stream name, started on first use."""

    def __init__(self) -> None:
        self._workers: dict[str, _Worker] = {}
        self._lock = threading.Lock()

    def submit(self, stream: str, job: Callable[[], None]) -> None:
        with self._lock:
            worker = self._workers.get(stream)
            if worker is None:
                worker = self._workers[stream] = _Worker(stream)
        worker.jobs.put(job)

    def close(self) -> None:
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.jobs.put(_STOP)
        for worker in workers:
            worker.thread.join(timeout=5.0)
