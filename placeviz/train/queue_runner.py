"""TF1's queue runners: threads that run a queue's enqueue ops over and over, until the queue
closes (``OutOfRangeError``) or their coordinator asks them to stop.

As TensorFlow's: each enqueue op gets a thread; the last one to end closes the queue; with a
coordinator, one more thread waits for the stop request and cancels the queue (its pending
enqueues fail), and an error other than the queue closing stops the coordinator. Note that a
placeviz session runs one ``run`` at a time: a runner's enqueue that blocks (on a full queue,
or on too few gradients) keeps the session's other runs waiting until it returns.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from placeviz.errors import OutOfRangeError
from placeviz.graph.core import Operation, get_default_graph, get_default_session
from placeviz.graph.graph_keys import GraphKeys
from placeviz.train.coordinator import Coordinator

logger = logging.getLogger("placeviz")


class QueueRunner:
    """Runs ``enqueue_ops`` of ``queue`` in threads (``create_threads``)."""

    def __init__(
        self,
        queue: Any = None,
        enqueue_ops: Sequence[Operation] | None = None,
        close_op: Operation | None = None,
        cancel_op: Operation | None = None,
        queue_closed_exception_types: Sequence[type[BaseException]] | None = None,
    ) -> None:
        if queue is None:
            raise ValueError("Queue is a required argument")
        if not enqueue_ops:
            raise ValueError("Enqueue ops is a required argument")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (
            cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        )
        closed = tuple(queue_closed_exception_types or (OutOfRangeError,))
        if not closed:
            raise ValueError("Empty queue_closed_exception_types")
        self._queue_closed_exception_types = closed
        self._lock = threading.Lock()
        # session -> enqueue threads still running in it
        self._runs_per_session: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list[Operation]:
        return list(self._enqueue_ops)

    @property
    def close_op(self) -> Operation:
        return self._close_op

    @property
    def cancel_op(self) -> Operation:
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple[type[BaseException], ...]:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Errors the threads raised when no coordinator took them."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        return self._queue.name

    def _run(self, sess: Any, enqueue_op: Operation, coord: Coordinator | None) -> None:
        decremented = False
        try:
            while not (coord is not None and coord.should_stop()):
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as error:  # TF ignores it too
                                logger.debug("Ignored exception: %s", error)
                    return
        except Exception as error:
            if coord is not None:
                coord.request_stop(error)
            else:
                logger.error("Exception in QueueRunner: %s", error)
                with self._lock:
                    self._exceptions_raised.append(error)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess: Any, coord: Coordinator) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as error:  # TF ignores it too
            logger.debug("Ignored exception: %s", error)

    def create_threads(
        self,
        sess: Any,
        coord: Coordinator | None = None,
        daemon: bool = False,
        start: bool = False,
    ) -> list[threading.Thread]:
        """One thread per enqueue op (and, with ``coord``, one that cancels the queue when it
        stops); none while this runner's threads still run in ``sess``."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(target=self._run, args=(sess, op, coord)) for op in self._enqueue_ops
        ]
        if coord is not None:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop,
                    args=(sess, coord),
                    name=f"QueueRunnerThread-{self.name}",
                )
            )
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            thread.daemon = daemon
            if start:
                thread.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(
    sess: Any = None,
    coord: Coordinator | None = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = GraphKeys.QUEUE_RUNNERS,
) -> list[threading.Thread]:
    """Threads for every queue runner in ``collection`` of the session's graph."""
    from placeviz.runtime.session import Session

    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use `with "
                "sess.as_default()` or pass an explicit session to "
                "tf.start_queue_runners(sess=sess)"
            )
    if not isinstance(sess, Session):
        if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {sess.__class__}")
    runners = sess.graph.get_collection(collection)
    if not runners:
        logger.warning(
            "`tf.train.start_queue_runners()` was called when no queue runners were defined. "
            "You can safely remove the call to this deprecated function."
        )
    with sess.graph.as_default():
        threads: list[threading.Thread] = []
        for runner in runners:
            threads.extend(runner.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
