"""The master of a session on a target: the cluster's devices, and a plan run across its tasks.

A Dask client in the user's process. It learns each task's devices and clock, ships each task the
ops of the graph (once per op), and runs a plan as one Dask task per partition, pinned to the
partition's worker. A tensor one task makes and another reads is a Dask result moved by Dask from
worker to worker; only fetched tensors come back to the client. A task that dies fails the runs
that need it with ``UnavailableError`` within seconds.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from placeviz.cluster import task as task_functions
from placeviz.cluster.coordinator import identity, task_host_port
from placeviz.cluster.graph_def import export_ops
from placeviz.cluster.partition import Partition, partition_plan
from placeviz.cluster.security import scheme, security
from placeviz.devices.context import Device, PhysicalDevice
from placeviz.devices.profiles import get_profile
from placeviz.devices.spec import DeviceSpec
from placeviz.errors import UnavailableError
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.runtime.plan import Plan
from placeviz.train.cluster_spec import ClusterSpec

CONNECT_TIMEOUT_S = 10.0
POLL_S = 0.25  # how often a waiting run checks that its tasks are still there
_run_ids = itertools.count()


@dataclass
class TaskInfo:
    name: str  # '/job:ps/task:0'
    address: str  # the Dask worker's, 'tcp://127.0.0.1:2222'
    pid: int
    clock_offset_ns: int  # add to the task's clock to get the client's
    devices: list[Device] = field(default_factory=list)
    cluster: dict[str, Any] = field(default_factory=dict)  # the cluster spec the task serves


@dataclass
class RemoteRun:
    """What a run across the cluster gave back: fetched values, each partition's report."""

    values: dict[int, Any]  # id(tensor) -> value
    reports: list[tuple[TaskInfo, dict[str, Any]]]
    # (Dask key, receiving task) -> tensor, from, to: one tensor may go to several tasks
    transfers: dict[tuple[str, str], tuple[Tensor, Device, Device]]


def target_address(target: str) -> str:
    """'grpc://localhost:2222' -> 'tcp://127.0.0.1:2222' ('tls://' when TLS is on)."""
    given, _, rest = target.partition("://")
    if not rest or given not in ("grpc", "tcp", "tls"):
        raise ValueError(f"Session target {target!r} must look like grpc://host:port")
    host, port = task_host_port(rest)
    return f"{scheme()}://{host}:{port}"


class ClusterMaster:
    """A client of the cluster behind ``target``: its tasks and devices, and runs on them."""

    def __init__(self, target: str) -> None:
        address = target_address(target)  # a malformed target is the user's first error
        try:
            from distributed import Client
        except ImportError as exc:
            raise ImportError(
                f"A session on a cluster ({target}) needs Dask: pip install 'placeviz[cluster]'"
            ) from exc
        found = identity(address)
        if found is None or "scheduler" not in found:
            raise UnavailableError(
                f"No placeviz server answers at {target}: start one with "
                "pv.train.Server(cluster, job_name, task_index) or `placeviz server`"
            )
        self.target = target
        self.scheduler = found["scheduler"]
        self.client = Client(
            self.scheduler,
            set_as_default=False,
            timeout=CONNECT_TIMEOUT_S,
            security=security(),
        )
        self.tasks: dict[str, TaskInfo] = {}  # by worker address
        self._discover()
        self._by_name = {info.name: info for info in self.tasks.values()}
        local = self.tasks.get(address)
        if local is None:
            raise UnavailableError(f"The server at {target} is not a task of its cluster")
        self.local_task = DeviceSpec.from_string(local.name)
        # The tasks of the target's cluster spec that no server runs: name -> address.
        spec = ClusterSpec(local.cluster)
        self.missing_tasks = {
            name: str(spec.task_address(job, index))
            for job in spec.jobs
            for index in spec.task_indices(job)
            if (name := task_functions.task_name(job, index)) not in self._by_name
        }
        self.devices = [d for info in self._sorted_tasks() for d in info.devices]
        self._task_of_device = {d.name: info for info in self.tasks.values() for d in info.devices}
        self._graph_key = uuid.uuid4().hex
        self._shipped: dict[str, int] = {}  # worker address -> ops of the graph shipped there

    @property
    def dashboard(self) -> str:
        return str(self.client.dashboard_link)

    def _sorted_tasks(self) -> list[TaskInfo]:
        return sorted(self.tasks.values(), key=lambda t: DeviceSpec.from_string(t.name).sort_key())

    def _discover(self, workers: list[str] | None = None) -> None:
        """Learn the tasks (or those at ``workers``): process, clock and devices."""
        sent = time.perf_counter_ns()
        described = self.client.run(task_functions.describe, workers=workers)
        back = time.perf_counter_ns()
        for address, info in described.items():
            offset = (sent + back) // 2 - info["clock_ns"]
            known = self.tasks.get(address)
            if known is not None:  # restarted: the same task and devices, a new process
                known.pid, known.clock_offset_ns = info["pid"], offset
                continue
            task = self.tasks[address] = TaskInfo(info["task"], address, info["pid"], offset)
            task.devices = [_device(task, d) for d in info["devices"]]
            task.cluster = info["cluster"]

    def task_of(self, device: Device) -> TaskInfo:
        return self._task_of_device[device.name]

    def close(self) -> None:
        self.client.close()

    def reset(self) -> None:
        """Every task forgets its variables and the graphs clients shipped to it."""
        self.client.run(task_functions.reset)

    # -- running ----------------------------------------------------------------------------
    def _ship(self, graph: Graph, device_of: Any, addresses: set[str]) -> None:
        """Send each task the ops it has not seen (a task keeps its copy of the graph)."""
        count = len(graph._ops)
        for address in sorted(addresses):
            start = self._shipped.get(address, 0)
            if start == count:
                continue
            records = export_ops(graph._ops[start:count], device_of)
            installed = self.client.run(
                task_functions.install,
                self._graph_key,
                records,
                start,
                graph.seed,
                workers=[address],
            )
            # What the task says it holds: a task that had not seen ops up to ``start`` took
            # none, and the next run ships from where it stands.
            self._shipped[address] = installed[address]

    def _require_alive(self, names: set[str]) -> None:
        """Fail when a task the run needs is gone; meet again a task restarted at its address
        (a new process: it has no graph and its variables are uninitialized)."""
        alive = self.client.run_on_scheduler(_worker_pids)
        for name in names:
            info = self._by_name[name]
            pid = alive.get(info.address)
            if pid is not None and pid != info.pid:
                self._discover([info.address])
                self._shipped.pop(info.address, None)
        gone = sorted(name for name in names if self._by_name[name].address not in alive)
        if gone:
            info = self._by_name[gone[0]]
            raise UnavailableError(
                f"Task {info.name} (process {info.pid} at {info.address}) is unavailable: "
                "its process ended or cannot be reached, so the run could not finish. "
                "Runs that do not need it still work; restart it with its Server."
            )

    def run(
        self,
        plan: Plan,
        feed_values: Sequence[Any],
        graph: Graph,
        device_of: Any,
        full_trace: bool = False,
    ) -> RemoteRun:
        """Run ``plan``; ``device_of(op)`` names the device the master assigned to any op;
        with ``full_trace`` the tasks also record output sizes and memory."""

        def task_of_op(op: Operation) -> str:
            return self.task_of(plan.devices[op._id]).name

        partitions = partition_plan(plan, task_of_op)
        needed = {p.task for p in partitions}
        self._require_alive(needed)
        self._ship(graph, device_of, {self._by_name[name].address for name in needed})
        feeds = {id(t): v for t, v in zip(plan.feeds, feed_values)}
        # Dask keys are the cluster's, shared by every client: this master's graph key makes
        # them unique.
        prefix = f"placeviz-{self._graph_key[:12]}-run{next(_run_ids)}"
        made: dict[int, tuple[Any, TaskInfo]] = {}  # id(tensor) -> (future of it, its task)
        results: list[tuple[TaskInfo, Any]] = []
        transfers: dict[tuple[str, str], tuple[Tensor, Device, Device]] = {}
        futures = []
        for index, part in enumerate(partitions):
            info = self._by_name[part.task]
            inputs = [made[id(t)][0] for t in part.inputs]
            sent = []  # keys of the inputs another task makes: Dask moves them here, once
            for tensor in part.inputs:
                future, source = made[id(tensor)]
                key = (str(future.key), part.task)
                if source is not info and key not in transfers:
                    reader = next(op for op in part.ops if tensor in op.inputs)
                    src, dst = plan.devices[tensor.op._id], plan.devices[reader._id]
                    sent.append(key[0])
                    transfers[key] = (tensor, src, dst)
            waits = [results[i][1] for i in sorted(part.waits_for)]
            future = self.client.submit(
                task_functions.run_partition,
                self._graph_key,
                tuple(op.name for op in part.ops),
                [t.name for t in part.outputs],
                [op.name for op in part.targets],
                {t.name: feeds[id(t)] for t in part.feeds},
                [t.name for t in part.inputs],
                sent,
                full_trace,
                *inputs,
                *waits,
                key=f"{prefix}-{part.task}-stage{part.stage}",
                workers=[info.address],
                allow_other_workers=False,
                pure=False,
            )
            report = self.client.submit(
                task_functions.pick_report,
                future,
                key=f"{prefix}-report-{index}",
                workers=[info.address],
                pure=False,
            )
            results.append((info, report))
            futures += [future, report]
            for tensor in part.outputs:
                value = self.client.submit(
                    task_functions.pick_value,
                    future,
                    tensor.name,
                    key=f"{prefix}-{tensor.name}",
                    workers=[info.address],
                    pure=False,
                )
                made[id(tensor)] = (value, info)
        fetched = [f for f in plan.fetches if isinstance(f, Tensor)]
        wanted = [made[id(t)][0] for t in fetched] + [r for _, r in results]
        try:
            gathered = self._gather(wanted, partitions)
        finally:
            self.client.cancel(futures + [v for v, _ in made.values()])
        values = {id(t): v for t, v in zip(fetched, gathered)}
        reports = [(info, report) for (info, _), report in zip(results, gathered[len(fetched) :])]
        return RemoteRun(values, reports, transfers)

    def _gather(self, wanted: list[Any], partitions: Sequence[Partition]) -> list[Any]:
        """Wait for the run; a task of it that left the cluster fails it (never a hang)."""
        needed = {p.task for p in partitions}
        settled = threading.Event()
        left = [len(wanted)]
        lock = threading.Lock()

        def one_done(future: Any) -> None:
            with lock:
                left[0] -= 1
                if left[0] == 0 or future.status == "error":
                    settled.set()

        for future in wanted:
            future.add_done_callback(one_done)
        while not settled.wait(POLL_S):
            self._require_alive(needed)
        return self.client.gather(wanted)


def _worker_pids(dask_scheduler: Any) -> dict[str, int]:
    return {address: worker.pid for address, worker in dask_scheduler.workers.items()}


def _device(task: TaskInfo, record: dict[str, Any]) -> Device:
    spec = DeviceSpec.from_string(record["name"])
    profile = get_profile(record["profile"]) if record["profile"] else None
    physical = PhysicalDevice(
        name=f"{task.name}{record['physical']}",
        device_type=spec.device_type or "CPU",
        index=spec.device_index or 0,
        memory_bytes=record["memory_limit"],
        description=record["description"],
        simulated=record["simulated"],
        profile=profile,
    )
    return Device(spec, physical, record["memory_limit"], record["logical"])
