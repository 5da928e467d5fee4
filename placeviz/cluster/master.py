"""The master of a session on a target: the cluster's devices, and a plan run across its tasks.

A Dask client in the user's process. It learns each task's devices and clock through the
scheduler, then talks to the tasks directly over Dask's comms: it ships each task the ops of the
graph (once per op) and each run's program (once per plan, ``program.py``), and a step is one
``placeviz_step`` message to each task the plan needs, sent from the calling thread's own loop
(``step_loop.py``). Tensors between tasks go from task to task (``steps.py``); only fetched
tensors come back to the client. A task that dies fails the runs that need it with
``UnavailableError`` at once; one restarted at its address is met again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from placeviz.cluster import task as task_functions
from placeviz.cluster.cluster_spec import ClusterSpec
from placeviz.cluster.coordinator import identity, task_host_port
from placeviz.cluster.events import RemoteRun, TaskInfo, remote_events
from placeviz.cluster.frames import as_frames, tensors_of
from placeviz.cluster.graph_def import export_ops
from placeviz.cluster.partition import partition_plan
from placeviz.cluster.program import RunProgram, build_programs
from placeviz.cluster.security import scheme, security
from placeviz.cluster.step_loop import StepLoops
from placeviz.devices.context import Device, PhysicalDevice
from placeviz.devices.profiles import get_profile
from placeviz.devices.spec import DeviceSpec
from placeviz.errors import UnavailableError
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.runtime.plan import Plan
from placeviz.runtime.remote import RemoteResult, RemoteRunFailed

CONNECT_TIMEOUT_S = 10.0
CLOCK_READINGS = 8  # round trips to each task when its clock offset is measured
ABORTED_REPLIES_S = 1.0  # how long an interrupted run waits for its tasks' reports
_run_ids = itertools.count()


def target_address(target: str) -> str:
    """'grpc://localhost:2222' -> 'tcp+asyncio://127.0.0.1:2222' ('tls://' when TLS is on)."""
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
        # Messages walked for nothing otherwise (process.skip_offload_sizing).
        self.client.rpc.allow_offload = False
        self._step_loops = StepLoops(self.client.connection_args, CONNECT_TIMEOUT_S)
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
        # a run's programs, by its plan (kept: its id stays its own) and trace level
        self._programs: dict[tuple[int, bool], tuple[Plan, str, RunProgram]] = {}
        self._installed: dict[str, set[str]] = {}  # program key -> tasks that hold it
        self._in_flight: dict[str, list[str]] = {}  # steps under way -> their tasks

    @property
    def dashboard(self) -> str:
        return str(self.client.dashboard_link)

    def _sorted_tasks(self) -> list[TaskInfo]:
        return sorted(self.tasks.values(), key=lambda t: DeviceSpec.from_string(t.name).sort_key())

    def _discover(self, workers: list[str] | None = None) -> None:
        """Learn the tasks (or those at ``workers``): process, clock and devices."""
        described = self.client.run(task_functions.describe, workers=workers)
        offsets = self.client.sync(self._clock_offsets, sorted(described))
        for address, info in described.items():
            offset = offsets[address]
            known = self.tasks.get(address)
            if known is not None:  # restarted: the same task and devices, a new process
                known.pid, known.clock_offset_ns = info["pid"], offset
                continue
            task = self.tasks[address] = TaskInfo(info["task"], address, info["pid"], offset)
            task.devices = [_device(task, d) for d in info["devices"]]
            task.cluster = info["cluster"]

    async def _clock_offsets(self, addresses: list[str]) -> dict[str, int]:
        """What to add to each task's clock to get this process's: its clock read between two
        of ours, straight over Dask's comms, the reading with the shortest round trip kept (its
        error is at most half that trip), as NTP does."""
        offsets = {}
        for address in addresses:
            best: tuple[int, int] | None = None
            for _ in range(CLOCK_READINGS):
                sent = time.perf_counter_ns()
                theirs = await _call(self.client.rpc, address, "placeviz_clock")
                back = time.perf_counter_ns()
                if best is None or back - sent < best[0]:
                    best = (back - sent, (sent + back) // 2 - theirs)
            assert best is not None
            offsets[address] = best[1]
        return offsets

    def task_of(self, device: Device) -> TaskInfo:
        return self._task_of_device[device.name]

    def close(self) -> None:
        """Steps still running end (a kernel of them that waits for another run, with
        CancelledError, as TF's ``Session::Close`` cancels them), tasks drop this session's
        graph and programs (their variables stay), then the client goes."""
        rpc = self.client.rpc
        for step, addresses in list(self._in_flight.items()):
            with contextlib.suppress(Exception):
                self.client.sync(_tell, rpc, addresses, "placeviz_abort", step=step)
        shipped = sorted(self._shipped)
        if shipped:
            with contextlib.suppress(Exception):  # a task that is gone has nothing to drop
                self.client.sync(_tell, rpc, shipped, "placeviz_forget", graph=self._graph_key)
        self._step_loops.close()
        self.client.close()

    def reset(self) -> None:
        """Every task forgets its variables and the graphs clients shipped to it."""
        self.client.run(task_functions.reset)

    # -- running ----------------------------------------------------------------------------
    def _ship(self, graph: Graph, device_of: Any, addresses: set[str]) -> None:
        """Send each task the ops it has not seen (a task keeps its copy of the graph)."""
        count = graph.operation_count
        for address in sorted(addresses):
            start = self._shipped.get(address, 0)
            if start == count:
                continue
            records = export_ops(graph.operations_from(start, count), device_of)
            installed = self.client.sync(
                _call,
                self.client.rpc,
                address,
                "placeviz_install",
                graph=self._graph_key,
                records=_serialized(records),
                start=start,
                seed=graph.seed,
            )
            # What the task says it holds: a task that had not seen ops up to ``start`` took
            # none, and the next run ships from where it stands.
            self._shipped[address] = installed

    def _require_alive(self, names: set[str]) -> None:
        """Fail when a task the run needs is gone; meet again a task restarted at its address
        (a new process: it has no graph and its variables are uninitialized)."""
        alive = self.client.run_on_scheduler(_worker_pids)
        for name in names:
            info = self._by_name[name]
            pid = alive.get(info.address)
            if pid is not None and pid != info.pid:
                self._forget(info.address)
                self._discover([info.address])
        gone = sorted(name for name in names if self._by_name[name].address not in alive)
        if gone:
            info = self._by_name[gone[0]]
            raise UnavailableError(
                f"Task {info.name} (process {info.pid} at {info.address}) is unavailable: "
                "its process ended or cannot be reached, so the run could not finish. "
                "Runs that do not need it still work; restart it with its Server."
            )

    def _forget(self, address: str) -> None:
        """What this master sent the task at ``address`` (it is a new process there)."""
        self._shipped.pop(address, None)
        for programs in self._installed.values():
            programs.discard(address)

    def run(
        self,
        plan: Plan,
        feed_values: Sequence[Any],
        graph: Graph,
        device_of: Callable[[Operation], str],
        full_trace: bool,
        device_ids: Mapping[str, int],
    ) -> RemoteResult:
        """Run ``plan``: one message to each task it needs; ``device_of(op)`` names the device
        the master assigned to any op; with ``full_trace`` the tasks also record memory; the
        events come back with ``device_ids``' numbers."""
        remote, error = self._run(plan, feed_values, graph, device_of, full_trace)
        events = remote_events(remote, device_ids)
        if error is not None:  # with what every task ran until then
            raise RemoteRunFailed(error, events) from None
        return RemoteResult(remote.values, events)

    def process_of(self, device: Device) -> tuple[int, str]:
        task = self.task_of(device)
        return task.pid, task.address.split("://")[-1]

    def _run(
        self,
        plan: Plan,
        feed_values: Sequence[Any],
        graph: Graph,
        device_of: Callable[[Operation], str],
        full_trace: bool,
    ) -> tuple[RemoteRun, BaseException | None]:
        """The run and the error that ended it (a task's, or an interrupt), if one did: its
        tasks' reports, also of a step they failed or that was aborted there."""
        prepared = self._prepared(plan, full_trace)
        key, program = prepared
        feeds = {t.name: v for t, v in zip(plan.feeds, feed_values)}
        error: BaseException | None = None
        for attempt in (1, 2):
            self._ship(graph, device_of, set(program.programs))
            replies: dict[str, dict[str, Any]] = {}  # by task address, as they come back
            try:
                step = functools.partial(
                    self._step,
                    key=key,
                    program=program,
                    feeds=feeds,
                    full_trace=full_trace,
                    replies=replies,
                )
                self._step_loops.run(step)
            except _StepFailed as failed:
                error = failed.error
            except KeyboardInterrupt as interrupted:
                if not replies:
                    raise
                error = interrupted
            except _Restarted as restarted:
                # A task the step needs lost what this master sent it: a new process at its
                # address, or a connection to one that ended. Meet it again, once.
                self._require_alive({self.tasks[a].name for a in restarted.addresses})
                if attempt == 2:
                    raise UnavailableError(
                        f"Tasks at {sorted(restarted.addresses)} keep losing their graph"
                    ) from None
                continue
            break
        reports = [(self.tasks[address], reply) for address, reply in replies.items()]
        if error is not None:
            return RemoteRun({}, reports, program), error
        values = {}
        for reply in replies.values():
            values.update(tensors_of(reply["values"]))
        fetched = {id(t): values[t.name] for t in plan.fetches if isinstance(t, Tensor)}
        return RemoteRun(fetched, reports, program), None

    def _prepared(self, plan: Plan, full_trace: bool) -> tuple[str, RunProgram]:
        """The run's programs, built once per plan: the session hands the same plan object for
        the same fetches, feeds and trace level until its placement changes (the entry keeps
        the plan, so its ``id`` is not reused)."""
        found = self._programs.get((id(plan), full_trace))
        if found is not None:
            return found[1:]

        def task_of_op(op: Operation) -> str:
            return self.task_of(plan.devices[op.id]).name

        parts = partition_plan(plan, task_of_op)
        fetched = [f for f in plan.fetches if isinstance(f, Tensor)]
        program = build_programs(
            parts,
            lambda name: self._by_name[name].address,
            lambda op: plan.devices[op.id],
            fetched,
        )
        key = f"{self._graph_key}-{len(self._programs)}"
        self._programs[(id(plan), full_trace)] = (plan, key, program)
        self._installed[key] = set()
        return key, program

    async def _step(
        self,
        rpc: Any,
        key: str,
        program: RunProgram,
        feeds: dict[str, Any],
        full_trace: bool,
        replies: dict[str, dict[str, Any]],
    ) -> None:
        """Send each task its step message over ``rpc`` (a connection pool); put every reply in
        ``replies``. A task that fails ends the step on the others (they stop waiting for what
        it would have sent), as does an interrupted run (its coroutine cancelled)."""
        step = f"{key}-{next(_run_ids)}"
        installed = self._installed[key]
        calls = {}
        for address, stages, names in program.messages:
            message: dict[str, Any] = {
                "graph": self._graph_key,
                "program": key,
                "step": step,
                "feeds": as_frames({n: feeds[n] for n in names}),
                "full_trace": full_trace,
            }
            if address not in installed:
                message["stages"] = stages
            calls[address] = asyncio.ensure_future(_call(rpc, address, "placeviz_step", **message))
        by_call = {future: address for address, future in calls.items()}
        self._in_flight[step] = list(calls)
        try:
            await self._replies(rpc, step, by_call, installed, replies)
        except asyncio.CancelledError:
            # Interrupted: the tasks end the step, and report what they ran until then.
            pending = [future for future in by_call if not future.done()]
            await _tell(rpc, [by_call[f] for f in pending], "placeviz_abort", step=step)
            if pending:
                await asyncio.wait(pending, timeout=ABORTED_REPLIES_S)
            for future in pending:
                if future.done() and not future.cancelled() and future.exception() is None:
                    replies[by_call[future]] = future.result()
            raise
        finally:
            self._in_flight.pop(step, None)

    async def _replies(
        self,
        rpc: Any,
        step: str,
        by_call: dict[Any, str],
        installed: set[str],
        replies: dict[str, dict[str, Any]],
    ) -> None:
        """Each task's reply to ``step``'s message, into ``replies``; the first failure ends
        the step on the others."""
        pending = set(by_call)
        failure: BaseException | None = None
        restarted: set[str] = set()
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                address = by_call[future]
                error = future.exception()
                if _lost(error) or (error is None and future.result()["status"] == "unknown"):
                    restarted.add(address)
                elif error is not None:
                    failure = failure or error
                else:  # its report, also of a step it failed or that was aborted there
                    reply = replies[address] = future.result()
                    installed.add(address)
                    failure = failure or reply.get("error")
            if (failure is not None or restarted) and pending:
                await _tell(rpc, [by_call[f] for f in pending], "placeviz_abort", step=step)
        if restarted and failure is None:
            raise _Restarted(restarted)
        if failure is not None:
            raise _StepFailed(failure)


async def _call(rpc: Any, address: str, handler: str, **message: Any) -> Any:
    """``handler`` of the task at ``address``, over ``rpc`` (a Dask connection pool)."""
    return await getattr(rpc(address), handler)(**message)


async def _tell(rpc: Any, addresses: Sequence[str], handler: str, **message: Any) -> None:
    """The same message to every task at ``addresses``; one that is gone is left out."""
    await asyncio.gather(
        *(_call(rpc, a, handler, **message) for a in addresses), return_exceptions=True
    )


class _StepFailed(Exception):
    """A task's error (or a lost connection's) ended the step."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


class _Restarted(Exception):
    """Tasks at ``addresses`` did not know the step's graph or program, or could not be reached."""

    def __init__(self, addresses: set[str]) -> None:
        super().__init__(addresses)
        self.addresses = addresses


def _lost(error: BaseException | None) -> bool:
    """Whether ``error`` says the connection to a task broke (not an error its run raised)."""
    from distributed.comm import CommClosedError

    # Dask raises a plain OSError when it cannot connect in time.
    return isinstance(error, (CommClosedError, ConnectionError)) or type(error) is OSError


def _serialized(value: Any) -> Any:
    from distributed.protocol import to_serialize

    return to_serialize(value)


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
