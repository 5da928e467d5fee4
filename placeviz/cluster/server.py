"""``Server``: one task of a cluster, started as a process of its own (TF's ``tf.train.Server``).

The process is what ``placeviz server --cluster SPEC --job NAME --task I`` runs: a Dask worker on
the task's address (placeviz/cluster/process.py), forked by this process's launcher
(placeviz/cluster/launcher.py) and a child of this process. ``start_servers`` starts several at
once (``pv.test.create_local_cluster``): the cluster's scheduler and the launcher start side by
side, then every task, each saying on its stdout when it listens. Servers this process started
are stopped when it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import socket
import subprocess
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from placeviz.cluster.cluster_spec import ClusterDef, ClusterSpec
from placeviz.devices import context as device_context
from placeviz.errors import UnavailableError
from placeviz.runtime.config import ConfigProto

if TYPE_CHECKING:
    from placeviz.cluster.launcher import Launcher, TaskProcess

START_TIMEOUT_S = 60.0
_started: weakref.WeakSet[Server] = weakref.WeakSet()
_launcher: Launcher | None = None
_launcher_lock = threading.Lock()
_starting = 0  # start_servers calls in flight, which keep the launcher


class Server:
    """``Server(cluster, job_name="ps", task_index=0)`` starts task ``/job:ps/task:0``.

    ``target`` is what a session connects to (``pv.Session(server.target)``); ``join()`` waits
    until the task ends; ``stop()`` (a placeviz extension: TF servers cannot be stopped) ends it
    and frees its port.
    """

    def __init__(
        self,
        server_or_cluster_def: ClusterSpec | ClusterDef | Mapping[Any, Any],
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: ConfigProto | None = None,
        start: bool = True,
    ) -> None:
        self.cluster_spec = ClusterSpec(server_or_cluster_def)
        if not self.cluster_spec:
            raise ValueError("A server needs a cluster with at least one job")
        self.job_name = job_name if job_name is not None else _only_job(self.cluster_spec)
        self.task_index = (
            task_index if task_index is not None else _only_task(self.cluster_spec, self.job_name)
        )
        if protocol not in (None, "grpc"):
            raise ValueError(f"placeviz servers speak 'grpc' (Dask over TCP), not {protocol!r}")
        self.config = config or ConfigProto()
        self._address = str(self.cluster_spec.task_address(self.job_name, self.task_index))
        self._process: TaskProcess | None = None
        self._pid: int | None = None
        if start:
            self.start()

    @property
    def task(self) -> str:
        return f"/job:{self.job_name}/task:{self.task_index}"

    @property
    def target(self) -> str:
        return f"grpc://{self._address}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The task's process id (None before ``start``)."""
        return self._pid

    def start(self) -> None:
        start_servers([self])

    def _environment(self) -> dict[str, str]:
        """The task sees the GPUs its config lets it see: ``device_count={'GPU': 0}`` hides them
        all (the seed's ps task, started with CUDA_VISIBLE_DEVICES=""); simulated GPUs are
        passed on."""
        env = dict(os.environ)
        simulation = device_context.context().simulation()
        if simulation is not None:
            env["PLACEVIZ_SIMULATED_GPUS"] = str(simulation[0])
            env["PLACEVIZ_SIMULATED_PROFILE"] = simulation[1]
        if self.config.device_count.get("GPU") == 0:
            env["CUDA_VISIBLE_DEVICES"] = ""
            env["PLACEVIZ_SIMULATED_GPUS"] = "0"
        return env

    def join(self) -> None:
        """Block until the task's process ends (TF's servers never end; placeviz's on ``stop``)."""
        if self._process is not None:
            self._process.wait()

    def stop(self, timeout: float = 10.0) -> None:
        """End the task and free its address; the cluster's scheduler goes with the last task,
        the launcher with the last task this process started."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        from placeviz.cluster.coordinator import release

        release(self.cluster_spec)
        _close_launcher_when_unused()

    @staticmethod
    def create_local_server(config: ConfigProto | None = None, start: bool = True) -> Server:
        """A one-task cluster on a free loopback port (TF's test helper)."""
        return Server(
            {"localhost": [f"localhost:{free_port()}"]}, "localhost", 0, config=config, start=start
        )

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<pv.train.Server {self.task} at {self.target} ({state})>"


def free_port() -> int:
    """A port nothing listens on now, on loopback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _only_job(cluster: ClusterSpec) -> str:
    if len(cluster.jobs) != 1:
        raise ValueError("Must specify an explicit `job_name`.")
    return cluster.jobs[0]


def _only_task(cluster: ClusterSpec, job: str) -> int:
    indices = cluster.task_indices(job)
    if len(indices) != 1:
        raise ValueError("Must specify an explicit `task_index`.")
    return indices[0]


def start_servers(servers: Sequence[Server]) -> None:
    """Start the tasks of ``servers`` that do not run, all at once; returns when each listens.
    A task that does not start fails them all (those that started are stopped) with
    ``UnavailableError``, naming it and the end of its log."""
    from placeviz.cluster.coordinator import cluster_key, release

    pending = [server for server in servers if not server.running]
    if not pending:
        return
    # The launcher imports placeviz and Dask while the scheduler starts.
    with _held_launcher() as launcher:
        try:
            _fork_tasks(launcher, pending)
        except BaseException:
            for cluster in {cluster_key(s.cluster_spec): s.cluster_spec for s in pending}.values():
                release(cluster)  # its scheduler, when no other task of it runs
            raise


def _fork_tasks(launcher: Launcher, pending: Sequence[Server]) -> None:
    from placeviz.cluster.coordinator import cluster_key, first_lines, scheduler_for
    from placeviz.cluster.launcher import TaskRequest
    from placeviz.cluster.rendezvous import rendezvous_dir

    requests = [
        TaskRequest(
            cluster=server.cluster_spec.as_dict(),
            job=server.job_name,
            task=server.task_index,
            scheduler=scheduler_for(server.cluster_spec, launcher.fork_scheduler)["address"],
            env=server._environment(),
            cwd=os.getcwd(),
            log=str(rendezvous_dir() / f"{key}-{server.job_name}-{server.task_index}.log"),
        )
        for server in pending
        for key in [cluster_key(server.cluster_spec)]
    ]
    pipes = [os.pipe() for _ in pending]
    stdouts: list[IO[str]] = [os.fdopen(read) for read, _ in pipes]
    try:
        processes = launcher.fork(requests, [write for _, write in pipes])
    except BaseException:
        for stdout in stdouts:
            stdout.close()
        raise
    finally:
        for _, write in pipes:
            os.close(write)
    lines = first_lines(stdouts, START_TIMEOUT_S)
    failed = next((i for i, line in enumerate(lines) if not line.startswith("placeviz task")), None)
    if failed is not None:
        for process, stdout in zip(processes, stdouts):
            process.kill()
            process.wait()
            stdout.close()
        server = pending[failed]
        tail = "\n".join(Path(requests[failed].log).read_text().strip().splitlines()[-5:])
        raise UnavailableError(
            f"Could not start {server.task} on {server._address}: {tail or 'no output'}"
        )
    for server, process, stdout, line in zip(pending, processes, stdouts, lines):
        # 'placeviz task /job:ps/task:0 listening on tcp+asyncio://127.0.0.1:2222 (pid 123)'
        server._address = line.split(" listening on ")[1].split(" ")[0].split("://")[-1]
        server._process = process
        server._pid = process.pid
        threading.Thread(target=_drain, args=(stdout,), daemon=True).start()
        _started.add(server)


@contextlib.contextmanager
def _held_launcher() -> Iterator[Launcher]:
    """This process's launcher (started when none runs), kept while the caller starts tasks."""
    global _launcher, _starting
    from placeviz.cluster.launcher import Launcher

    with _launcher_lock:
        if _launcher is None or not _launcher.alive:
            _launcher = Launcher()
        _starting += 1
        launcher = _launcher
    try:
        yield launcher
    finally:
        with _launcher_lock:
            _starting -= 1
        _close_launcher_when_unused()


def _close_launcher_when_unused() -> None:
    """The launcher ends with the last task it started: a process whose servers all stopped
    has no process of the cluster left."""
    global _launcher
    with _launcher_lock:
        running = any(s._process is not None for s in _started)
        if _launcher is not None and not running and not _starting:
            _launcher.close()
            _launcher = None


def _drain(stdout: IO[str]) -> None:
    """Read what the task prints, so a full pipe never blocks it."""
    with contextlib.suppress(ValueError, OSError), stdout:
        for _ in stdout:
            pass


@atexit.register
def _stop_all() -> None:
    for server in list(_started):
        server.stop()


def create_local_cluster(
    num_workers: int,
    num_ps: int,
    protocol: str = "grpc",
    worker_config: ConfigProto | None = None,
    ps_config: ConfigProto | None = None,
) -> tuple[list[Server], list[Server]]:
    """Start ``num_workers`` worker and ``num_ps`` ps tasks on free loopback ports, each its own
    process, all at once; returns (workers, ps_servers), as TensorFlow's helper does.

    A port free when picked is in the range the kernel also hands out to outgoing connections,
    so one of the tasks started first may take it before its own task binds it: then the tasks
    are stopped and the cluster is started again on new ports (three tries)."""
    if num_workers < 1 or num_ps < 0:
        raise ValueError("A local cluster needs at least one worker and no negative ps count")
    for attempt in itertools.count(1):
        cluster = {"worker": [f"localhost:{free_port()}" for _ in range(num_workers)]}
        if num_ps:
            cluster["ps"] = [f"localhost:{free_port()}" for _ in range(num_ps)]
        tasks = [("worker", i, worker_config) for i in range(num_workers)]
        tasks += [("ps", i, ps_config) for i in range(num_ps)]
        servers = [
            Server(cluster, job, index, protocol=protocol, config=config, start=False)
            for job, index, config in tasks
        ]
        try:
            start_servers(servers)
        except UnavailableError:
            if attempt == _TRIES:
                raise
            continue
        return servers[:num_workers], servers[num_workers:]


_TRIES = 3
