"""What one cluster task runs: the partitions of its clients' graphs (its process: ``process.py``).

Its devices are named with the task's prefix, and its variables live in the
process (``TaskState``), shared by every session of every client, as a TensorFlow server keeps
them: a second session reads what the first trained, until ``reset``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placeviz.cluster.cluster_spec import ClusterSpec
from placeviz.cluster.graph_def import OpRecord, import_ops
from placeviz.contract import EventKind
from placeviz.devices import context as device_context
from placeviz.errors import OpError
from placeviz.events.recorder import EventBatch
from placeviz.graph.core import Graph, Operation
from placeviz.runtime.config import ConfigProto, RunOptions
from placeviz.runtime.state import SessionState, VariableSlot

# Per event kind, whether a partition reports it (a run's own event and placements are the
# master's).
_REPORTED = np.zeros(max(EventKind) + 1, bool)
_REPORTED[[EventKind.OP, EventKind.TRANSFER, EventKind.ALLOC, EventKind.FREE]] = True


REPORTED_COLUMNS = ("kind", "t0", "t1", "node", "device", "peer", "bytes", "source")


def task_name(job: str, task: int) -> str:
    return f"/job:{job}/task:{task}"


class TaskState(SessionState):
    """Variables by name, for every session in this process (TF's resource container)."""

    def __init__(self) -> None:
        super().__init__()
        self._by_name: dict[str, VariableSlot] = {}

    def variable_slot(self, op: Operation) -> VariableSlot:
        slot = self._by_name.get(op.name)
        if slot is None:
            slot = self._by_name[op.name] = VariableSlot(op)
        return slot

    def clear(self) -> None:
        """Every variable uninitialized again, every queue and accumulator empty (compiled plans
        keep their slots and resources, so those stay and lose their values)."""
        for slot in self._by_name.values():
            slot.forget()
        self.reset_resources()


@dataclass
class _ClientGraph:
    graph: Graph
    session: Any  # placeviz.Session over ``graph`` and the task's state
    shipped: int = 0  # records imported so far
    # per session and partition (its ops, feeds, fetches, targets): how to run it, and the ids
    # of every other op, which its runs count as done
    stages: dict[tuple[Any, ...], tuple[Any, frozenset[int]]] = field(default_factory=dict)
    waits: dict[tuple[str, ...], bool] = field(default_factory=dict)  # partitions that may wait
    idle: list[Any] = field(default_factory=list)  # sessions for partitions that may wait


class TaskRuntime:
    """The graphs clients shipped here, each with a session, and the task's variables."""

    def __init__(self) -> None:
        self.state = TaskState()
        self._graphs: dict[str, _ClientGraph] = {}
        self._lock = threading.Lock()

    def install(self, key: str, records: Sequence[OpRecord], start: int, seed: int | None) -> int:
        """Add records ``start..`` of the client graph ``key``; returns how many it now has."""
        with self._lock:
            shipped = self._graphs.get(key)
            if shipped is None:
                graph = Graph()
                graph.seed = seed
                shipped = self._graphs[key] = _ClientGraph(graph, self._session(graph))
            if start == shipped.shipped:
                here = device_context.process_task()
                import_ops(shipped.graph, records, lambda op: _same_task(op, here))
                shipped.shipped += len(records)
                if shipped.graph.operation_count != shipped.shipped:  # events name ops by number
                    raise RuntimeError(f"Task graph {key} numbers its ops unlike its client's")
            return shipped.shipped

    def _session(self, graph: Graph) -> Any:
        from placeviz.runtime.session import Session

        config = ConfigProto(inter_op_parallelism_threads=1)
        return Session(graph=graph, config=config, _state=self.state)

    def may_wait(self, key: str, ops: tuple[str, ...]) -> bool:
        """Whether the partition made of ``ops`` holds an op that waits for another run."""
        shipped = self._graphs[key]
        found = shipped.waits.get(ops)
        if found is None:
            by_name = shipped.graph._ops_by_name
            found = shipped.waits[ops] = any(by_name[name].op_def.waits for name in ops)
        return found

    def run(
        self,
        key: str,
        ops: tuple[str, ...],
        feeds: Sequence[str],
        fetches: Sequence[str],
        targets: Sequence[str],
        full_trace: bool,
        values: Sequence[Any],
    ) -> tuple[dict[str, Any], EventBatch]:
        """Run the partition made of ``ops`` with ``values`` for the tensors named ``feeds``;
        its fetched values by tensor name, and its events (the client's node ids: a task's copy
        of a graph numbers its ops as the client's does; devices by their index here).

        Ops of other partitions count as done: a control edge on one was met before this
        partition started (the master made it wait), so the run must not pull it in again.
        A partition that may wait runs in a session of its own, so that runs of the same
        client (the one that would wake it) go on beside it.
        """
        shipped = self._graphs[key]
        stage = (ops, tuple(feeds), tuple(fetches), tuple(targets))
        if not self.may_wait(key, ops):
            return self._run(shipped, shipped.session, stage, full_trace, values)
        with self._lock:
            session = shipped.idle.pop() if shipped.idle else self._session(shipped.graph)
        try:
            return self._run(shipped, session, stage, full_trace, values)
        finally:
            with self._lock:
                shipped.idle.append(session)

    def _run(
        self,
        shipped: _ClientGraph,
        session: Any,
        stage: tuple[Any, ...],
        full_trace: bool,
        values: Sequence[Any],
    ) -> tuple[dict[str, Any], EventBatch]:
        ops, feeds, fetches, targets = stage
        found = shipped.stages.get((id(session), *stage))
        if found is None:
            graph = shipped.graph
            mine = {graph._ops_by_name[name].id for name in ops}
            done = frozenset(range(graph.operation_count)) - mine
            wanted = [*fetches, *(graph.get_operation_by_name(t) for t in targets)]
            run = session.make_callable(wanted, list(feeds), True, _given_feeds=True)
            found = shipped.stages[(id(session), *stage)] = (run, done)
        run, done = found
        session._done_ops = done
        try:
            if full_trace:
                made = run(*values, options=RunOptions(trace_level=RunOptions.FULL_TRACE))
            else:
                made = run(*values)
        except Exception as error:
            raise StageFailed(error, session.last_run_events()) from None
        return dict(zip(fetches, made)), session.last_run_events()

    def device_names(self, key: str) -> list[str]:
        """The devices of client graph ``key``'s session, in the order its events number them."""
        return [d.name for d in self._graphs[key].session.devices]

    def forget(self, key: str) -> None:
        with self._lock:
            shipped = self._graphs.pop(key, None)
        if shipped is not None:
            for session in [shipped.session, *shipped.idle]:
                session.close()

    def graphs_held(self) -> int:
        return len(self._graphs)

    def knows(self, key: str) -> bool:
        """Whether client graph ``key`` was shipped here (a restarted task knows none)."""
        return key in self._graphs

    def reset(self) -> None:
        with self._lock:
            self.state.clear()


class StageFailed(Exception):
    """A stage whose run failed: the error, and the events its ops recorded before it did (the
    session keeps a failed run's events, so the step's report keeps them too)."""

    def __init__(self, error: Exception, events: EventBatch) -> None:
        super().__init__(error)
        self.error = error
        self.events = events


def _same_task(op: Operation, here: Any) -> bool:
    spec = op.requested_device
    return (spec.job, spec.task) == (here.job, here.task)


def reported(batches: Sequence[EventBatch]) -> np.ndarray:
    """The stages' op, transfer and memory events (a run's own event is the master's) as one
    array, a row per column of REPORTED_COLUMNS: one frame in the step's reply."""
    return EventBatch.join(batches).rows(REPORTED_COLUMNS, _REPORTED)


RUNTIME = TaskRuntime()
_CLUSTER: ClusterSpec | None = None  # this task's cluster spec, set by ``serving``


# -- the functions a master calls on a task through the scheduler (Dask's client.run) --------
def describe() -> dict[str, Any]:
    """The task's name, process, clock and devices, for the master's device list, and its
    cluster spec (the master learns from it which tasks of the cluster are not running)."""
    here = device_context.process_task()
    return {
        "task": task_name(here.job, here.task),
        "cluster": _CLUSTER.as_dict() if _CLUSTER is not None else {},
        "pid": os.getpid(),
        "devices": [
            {
                "name": d.name,
                "memory_limit": d.memory_limit,
                "simulated": d.simulated,
                "description": d.physical.description,
                "profile": d.physical.profile.name if d.physical.profile else None,
                "physical": d.physical.name,
                "logical": d.logical,
            }
            for d in device_context.context().devices()
        ],
    }


def reset() -> None:
    RUNTIME.reset()


def portable(error: Exception) -> Exception:
    """The error as the client should see it: same type and words, without the chain of
    causes and frames that only mean something here (and that Dask would pickle)."""
    if isinstance(error, OpError):
        return type(error)(error.message)
    try:
        return type(error)(*error.args)
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


def serving(cluster: ClusterSpec) -> None:
    """This process is a task of ``cluster`` (``describe`` reports its spec to masters)."""
    global _CLUSTER
    _CLUSTER = cluster
