"""One cluster task: a Dask worker process that runs partitions of its clients' graphs.

The worker is named after its task (``/job:ps/task:0``) and listens on the task's address from
the cluster spec. Its devices are named with the task's prefix, and its variables live in the
process (``TaskState``), shared by every session of every client, as a TensorFlow server keeps
them: a second session reads what the first trained, until ``reset``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placeviz.cluster.coordinator import scheduler_for, task_host_port
from placeviz.cluster.graph_def import OpRecord, import_ops
from placeviz.contract import EventKind
from placeviz.devices import context as device_context
from placeviz.errors import OpError
from placeviz.graph.core import Graph, Operation
from placeviz.runtime.config import ConfigProto, RunOptions
from placeviz.runtime.state import SessionState, VariableSlot
from placeviz.train.cluster_spec import ClusterSpec

# Events a partition reports (a run's own event and placements are the master's).
_REPORTED = np.array(
    [int(k) for k in (EventKind.OP, EventKind.TRANSFER, EventKind.ALLOC, EventKind.FREE)]
)


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
        """Every variable uninitialized again (compiled plans keep their slots, so the slots
        stay and lose their values)."""
        for slot in self._by_name.values():
            slot.forget()


@dataclass
class _ClientGraph:
    graph: Graph
    session: Any  # placeviz.Session over ``graph`` and the task's state
    shipped: int = 0  # records imported so far
    # per partition (its op names): the ids of every other op, which its runs count as done
    others: dict[tuple[str, ...], frozenset[int]] = field(default_factory=dict)


class TaskRuntime:
    """The graphs clients shipped here, each with a session, and the task's variables."""

    def __init__(self) -> None:
        self.state = TaskState()
        self._graphs: dict[str, _ClientGraph] = {}
        self._lock = threading.Lock()
        # One partition at a time in the task, whichever client sent it: clients training one
        # model (between-graph replication) update its variables one step after another.
        self._running = threading.Lock()

    def install(self, key: str, records: Sequence[OpRecord], start: int, seed: int | None) -> int:
        """Add records ``start..`` of the client graph ``key``; returns how many it now has."""
        from placeviz.runtime.session import Session

        with self._lock:
            shipped = self._graphs.get(key)
            if shipped is None:
                graph = Graph()
                graph.seed = seed
                config = ConfigProto(inter_op_parallelism_threads=1)
                session = Session(graph=graph, config=config, _state=self.state)
                shipped = self._graphs[key] = _ClientGraph(graph, session)
            if start == shipped.shipped:
                here = device_context.process_task()
                import_ops(shipped.graph, records, lambda op: _same_task(op, here))
                shipped.shipped += len(records)
            return shipped.shipped

    def run(
        self,
        key: str,
        ops: tuple[str, ...],
        feeds: dict[str, Any],
        fetches: Sequence[str],
        targets: Sequence[str],
        full_trace: bool,
    ) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """Run the partition made of ``ops``; its values by tensor name, and its events.

        Ops of other partitions count as done: a control edge on one was met before this
        partition started (the master made it wait), so the run must not pull it in again.
        """
        shipped = self._graphs[key]
        session, graph = shipped.session, shipped.graph
        done = shipped.others.get(ops)
        if done is None:
            mine = {graph._ops_by_name[name]._id for name in ops}
            done = shipped.others[ops] = frozenset(range(len(graph._ops))) - mine
        with self._running:
            session._done_ops = done
            level = RunOptions.FULL_TRACE if full_trace else RunOptions.NO_TRACE
            values = session.run(
                [*fetches, *(graph.get_operation_by_name(t) for t in targets)],
                feeds,
                options=RunOptions(trace_level=level),
            )
            return dict(zip(fetches, values)), _events(session, graph)

    def reset(self) -> None:
        with self._lock:
            self.state.clear()


def _same_task(op: Operation, here: Any) -> bool:
    spec = op.requested_device
    return (spec.job, spec.task) == (here.job, here.task)


def _events(session: Any, graph: Graph) -> dict[str, list[Any]]:
    """The last run's op and transfer events, with names instead of this process's ids."""
    columns = session._log.last_run_columns()
    keep = np.isin(columns["kind"], _REPORTED)
    names = [d.name for d in session.devices]
    ops = graph._ops
    return {
        "kind": columns["kind"][keep].tolist(),
        "t0": columns["t0"][keep].tolist(),
        "t1": columns["t1"][keep].tolist(),
        "op": [ops[n].name for n in columns["node"][keep]],
        "device": [names[d] for d in columns["device"][keep]],
        "peer": [names[p] if p >= 0 else "" for p in columns["peer"][keep]],
        "bytes": columns["bytes"][keep].tolist(),
        "source": columns["source"][keep].tolist(),
    }


RUNTIME = TaskRuntime()
_CLUSTER: ClusterSpec | None = None  # this task's cluster spec, set by ``serve``


# -- the functions a master calls on a task (by Dask's client.run or as tasks) ---------------
def describe() -> dict[str, Any]:
    """The task's name, process, clock and devices, for the master's device list, and its
    cluster spec (the master learns from it which tasks of the cluster are not running)."""
    here = device_context.process_task()
    return {
        "task": task_name(here.job, here.task),
        "cluster": _CLUSTER.as_dict() if _CLUSTER is not None else {},
        "pid": os.getpid(),
        "clock_ns": time.perf_counter_ns(),
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


def install(key: str, records: Sequence[OpRecord], start: int, seed: int | None) -> int:
    return RUNTIME.install(key, records, start, seed)


def reset() -> None:
    RUNTIME.reset()


def run_partition(
    key: str,
    ops: tuple[str, ...],
    fetches: Sequence[str],
    targets: Sequence[str],
    feeds: dict[str, Any],
    input_names: Sequence[str],
    sent_keys: Sequence[str],
    full_trace: bool,
    *inputs_then_waits: Any,
) -> dict[str, Any]:
    """A Dask task: run one partition with the tensors other partitions made
    (``inputs_then_waits`` starts with them; what follows are the partitions it only waited
    for); ``sent_keys`` are the Dask keys of the inputs another task sent."""
    from distributed import get_worker

    fed = dict(feeds)
    fed.update(zip(input_names, inputs_then_waits[: len(input_names)]))
    failed = None
    try:
        values, events = RUNTIME.run(key, ops, fed, fetches, targets, full_trace)
    except Exception as error:
        failed = _portable(error)
    if failed is not None:
        raise failed  # outside the handler: no chain back to this process's frames

    return {
        "values": values,
        "events": events,
        "received": _received(get_worker(), set(sent_keys)),
    }


async def _outlived(pidfd: int) -> None:
    """Returns once the process behind ``pidfd`` has ended (the task is then an orphan)."""
    ended = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(pidfd, ended.set)
    try:
        await ended.wait()
    finally:
        loop.remove_reader(pidfd)


def _portable(error: Exception) -> Exception:
    """The error as the client should see it: same type and words, without the chain of
    causes and frames that only mean something here (and that Dask would pickle)."""
    if isinstance(error, OpError):
        return type(error)(error.message)
    try:
        return type(error)(*error.args)
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


def _received(worker: Any, keys: set[str]) -> list[dict[str, Any]]:
    """Dask's own record of the transfers that brought this partition's inputs here, on the
    task's clock (Dask stamps them with the wall clock)."""
    if not keys:
        return []
    offset = time.perf_counter_ns() - time.time_ns()
    found = []
    for entry in reversed(worker.transfer_incoming_log):
        mine = {str(k): n for k, n in entry["keys"].items() if str(k) in keys}
        if mine:
            found.append(
                {
                    "keys": mine,
                    "t0": int(entry["start"] * 1e9) + offset,
                    "t1": int(entry["stop"] * 1e9) + offset,
                }
            )
            keys -= set(mine)
            if not keys:
                break
    return found


def pick_value(result: dict[str, Any], name: str) -> Any:
    return result["values"][name]


def pick_report(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "values"}


# -- the process ------------------------------------------------------------------------------
def serve(
    cluster: ClusterSpec,
    job: str,
    task: int,
    scheduler: str | None = None,
    parent: int | None = None,
    *,
    parent_pidfd: int | None = None,
) -> None:
    """Run the task in the foreground until it is stopped (SIGTERM, SIGINT), the scheduler goes
    away or process ``parent`` ends (a ``Server`` made in Python lives as long as its process, as
    TensorFlow's in-process servers do; a forked task is handed that process's ``parent_pidfd``);
    prints one line saying where it listens once it does."""
    global _CLUSTER
    _CLUSTER = cluster
    device_context.set_process_task(job, task)
    host, port = task_host_port(cluster.task_address(job, task))
    if parent is not None:
        try:
            parent_pidfd = os.pidfd_open(parent)
        except ProcessLookupError:
            return  # it ended before the task started
    address = scheduler or scheduler_for(cluster)["address"]
    asyncio.run(_work(address, host, port, task_name(job, task), parent_pidfd))


async def _work(scheduler: str, host: str, port: int, name: str, parent_pidfd: int | None) -> None:
    from distributed import Worker

    from placeviz.cluster.security import scheme, security

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    worker = Worker(
        scheduler,
        host=host,
        port=port,
        protocol=scheme(),
        security=security(),
        name=name,
        nthreads=2,
        memory_limit=0,  # a task keeps its tensors in memory, never spills them to disk
        death_timeout=10,  # a task whose scheduler is gone ends
        dashboard=False,
    )
    await worker
    print(f"placeviz task {name} listening on {worker.address} (pid {os.getpid()})", flush=True)
    finished = asyncio.ensure_future(worker.finished())
    stopped = asyncio.ensure_future(stop.wait())
    waits = [finished, stopped]
    if parent_pidfd is not None:
        waits.append(asyncio.ensure_future(_outlived(parent_pidfd)))
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if not finished.done():
        await worker.close(reason="placeviz server stopped")
