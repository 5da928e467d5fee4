"""``Server``: one task of a cluster, started as a process of its own (TF's ``tf.train.Server``).

The process is ``placeviz server --cluster SPEC --job NAME --task I``: a Dask worker on the
task's address (placeviz/cluster/task.py). Servers this process started are stopped when it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from placeviz.devices import context as device_context
from placeviz.errors import UnavailableError
from placeviz.runtime.config import ConfigProto
from placeviz.train.cluster_spec import ClusterDef, ClusterSpec

START_TIMEOUT_S = 60.0
_started: weakref.WeakSet[Server] = weakref.WeakSet()


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
            raise ValueError(f"placeviz servers speak 'grpc' (Dask's TCP), not {protocol!r}")
        self.config = config or ConfigProto()
        self._address = str(self.cluster_spec.task_address(self.job_name, self.task_index))
        self._process: subprocess.Popen[str] | None = None
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
        if self._process is not None and self._process.poll() is None:
            return
        from placeviz.cluster.coordinator import cluster_key, rendezvous_dir, scheduler_for

        scheduler = scheduler_for(self.cluster_spec)["address"]
        log_path = rendezvous_dir() / (
            f"{cluster_key(self.cluster_spec)}-{self.job_name}-{self.task_index}.log"
        )
        spec = json.dumps(self.cluster_spec.as_dict())
        command = [
            sys.executable,
            "-m",
            "placeviz",
            "server",
            "--cluster",
            spec,
            "--job",
            self.job_name,
            "--task",
            str(self.task_index),
            "--scheduler",
            scheduler,
            "--parent",
            str(os.getpid()),
        ]
        with open(log_path, "w") as log:  # Dask's own log lines, for when a task fails
            process = subprocess.Popen(
                command,
                env=self._environment(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
        line = _first_line(process, START_TIMEOUT_S)
        if not line.startswith("placeviz task"):
            process.kill()
            process.wait()
            tail = "\n".join(log_path.read_text().strip().splitlines()[-5:])
            raise UnavailableError(
                f"Could not start {self.task} on {self._address}: {tail or 'no output'}"
            )
        # 'placeviz task /job:ps/task:0 listening on tcp://127.0.0.1:2222 (pid 123)'
        self._address = line.split(" listening on ")[1].split(" ")[0].split("://")[-1]
        self._process = process
        self._pid = process.pid
        threading.Thread(target=_drain, args=(process,), daemon=True).start()
        _started.add(self)

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
        """End the task and free its address; the cluster's scheduler goes with the last task."""
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


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    """The task's first line on stdout, or '' if it said nothing in time."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return box[0].strip() if box else ""


def _drain(process: subprocess.Popen[str]) -> None:
    """Read what the task prints, so a full pipe never blocks it."""
    with contextlib.suppress(ValueError, OSError):
        for _ in process.stdout:  # type: ignore[union-attr]
            pass


@atexit.register
def _stop_all() -> None:
    for server in list(_started):
        server.stop()
