"""The Dask scheduler of a cluster: one process per cluster spec, found by every task of it.

TensorFlow's servers find each other through the cluster spec alone. Dask workers need a
scheduler, so the first task of a cluster to start launches one (its own process, so that any task
may die without taking the cluster with it) and writes its address to a rendezvous file named after
the cluster spec; tasks started later, from any process of this machine, read it there. The
scheduler listens on the host of the cluster's first task (loopback for ``localhost``), over TLS
when it is turned on (``security.py``), and exits
by itself once no task has been connected for a while; ``release`` stops it at once when the
last task of this machine stopped.

The scheduler's process imports Dask and this module only (none of placeviz's graph API, whose
import would double its start), and says it is ready by printing its record: the process that
started it waits for that line, not for the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from placeviz.cluster.rendezvous import locked, rendezvous_dir
from placeviz.cluster.security import connection_args, scheme, security
from placeviz.errors import UnavailableError

if TYPE_CHECKING:
    from placeviz.cluster.cluster_spec import ClusterSpec

START_TIMEOUT_S = 30.0
# The scheduler exits after this long without a task (and a first task has this long to come).
LONELY_S = 10.0
FIRST_TASK_S = 120.0

T = TypeVar("T")

# Processes that need only some of placeviz's modules (the scheduler's, the launcher's and the
# tasks it forks): placeviz's package is put in sys.modules unexecuted, so that importing them
# runs none of placeviz/__init__.py (the whole graph API, which builds graphs: Keras, the layers,
# the optimizers). argv: placeviz's folder, the module whose main runs, its arguments.
_BOOT = """
import importlib, importlib.util, sys
folder, module = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(
    "placeviz", folder + "/__init__.py", submodule_search_locations=[folder]
)
sys.modules["placeviz"] = importlib.util.module_from_spec(spec)
importlib.import_module(module).main(sys.argv[3:])
"""
_PACKAGE = Path(__file__).resolve().parent.parent


def lean_command(module: str, *args: str) -> list[str]:
    """The command that runs ``module.main(args)`` in a new process, placeviz unexecuted."""
    return [sys.executable, "-c", _BOOT, str(_PACKAGE), module, *args]


def loopback(host: str) -> str:
    """'localhost' as the address it means; any other name is the user's explicit choice."""
    return "127.0.0.1" if host in ("localhost", "") else host


def task_host_port(address: str | bytes) -> tuple[str, int]:
    text = address.decode() if isinstance(address, bytes) else address
    host, _, port = text.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"Task address {text!r} must be host:port")
    return loopback(host), int(port)


def cluster_key(cluster: ClusterSpec) -> str:
    spec = {str(job): {str(i): str(a) for i, a in tasks.items()} for job, tasks in _jobs(cluster)}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def _jobs(cluster: ClusterSpec) -> list[tuple[Any, dict[int, Any]]]:
    return [(job, cluster._job(job)) for job in sorted(cluster.jobs, key=str)]


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion on a thread of its own (the caller may be inside an event
    loop already: a Jupyter cell is)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as error:  # handed back to the caller's thread
            box["error"] = error

    thread = threading.Thread(target=target, name="placeviz-cluster-rpc")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


async def _identity(address: str) -> dict[str, Any]:
    from distributed.core import rpc

    async with rpc(address, timeout=3, connection_args=connection_args(address)) as remote:
        return await remote.identity()


def identity(address: str) -> dict[str, Any] | None:
    """What the Dask server at ``address`` says it is, or None when nothing answers there."""
    try:
        return run_async(lambda: _identity(address))
    except (OSError, asyncio.TimeoutError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found if _alive(found.get("pid", -1)) else None


def scheduler_for(
    cluster: ClusterSpec, fork: Callable[[str, Path, Path], tuple[int, IO[bytes]]] | None = None
) -> dict[str, Any]:
    """The cluster's scheduler (address, dashboard, pid), started here when none runs: by
    ``fork(host, rendezvous file, log)`` (the launcher's: its process id and stdout), else as
    a new process."""
    key = cluster_key(cluster)
    with locked(key) as path:
        found = _read(path)
        if found is not None:
            return found
        _, tasks = _jobs(cluster)[0]
        host, _ = task_host_port(tasks[min(tasks)])
        log_path = rendezvous_dir() / f"{key}.scheduler.log"
        if fork is not None:
            pid, stdout = fork(host, path, log_path)
        else:
            with open(log_path, "ab") as log:
                process = subprocess.Popen(
                    lean_command("placeviz.cluster.coordinator", host, str(path)),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    start_new_session=True,  # a Ctrl-C in the notebook's terminal is not ours
                )
            pid, stdout = process.pid, process.stdout  # type: ignore[assignment]
        with stdout:
            line = first_lines([stdout], START_TIMEOUT_S)[0]
        if line:
            return json.loads(line)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        raise UnavailableError(
            f"The scheduler of cluster {cluster} did not start on {host} (see {log_path})"
        )


def first_lines(pipes: Sequence[IO[str] | IO[bytes]], timeout: float) -> list[str]:
    """The first line each process wrote to its pipe ('' for one that ended or said nothing in
    ``timeout`` seconds), read as each comes: the processes start side by side."""
    found = [""] * len(pipes)
    waiting = {pipe.fileno(): i for i, pipe in enumerate(pipes)}
    deadline = time.monotonic() + timeout
    while waiting:
        ready, _, _ = select.select(list(waiting), [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        for fd in ready:
            index = waiting.pop(fd)
            line = pipes[index].readline()
            found[index] = (line.decode() if isinstance(line, bytes) else line).strip()
    return found


def release(cluster: ClusterSpec) -> None:
    """Stop the cluster's scheduler now if no task is connected to it any more."""
    key = cluster_key(cluster)
    with locked(key) as path:
        found = _read(path)
        if found is None:
            return
        seen = identity(found["address"])
        if seen is not None and seen.get("workers"):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(found["pid"], signal.SIGTERM)
        deadline = time.monotonic() + 5
        while _alive(found["pid"]) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(found["pid"], os.WNOHANG)  # reap it when it is our child
            time.sleep(0.02)
        path.unlink(missing_ok=True)


def check_loop_each_second() -> None:
    """Dask's servers check every 20 ms that their event loop still answers (its ``tick``): 50
    wake-ups a second in every process of a cluster, idle or not, on the cores the step's tasks
    need (0.55 ms of CPU per MLP step from a 4 + 4 cluster's idle tasks and scheduler, measured
    here). Each second still reports a loop blocked past Dask's limit (3 s). Called before the
    server is made, which reads the interval, in the tasks and the scheduler."""
    import dask

    dask.config.set({"distributed.admin.tick.interval": "1s"})


async def _serve(host: str, path: Path) -> None:
    from distributed import Scheduler

    check_loop_each_second()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with Scheduler(
        host=host,
        port=0,
        protocol=scheme(),
        security=security(),
        dashboard=False,  # connected when first asked for
        dashboard_address=f"{host}:0",
    ) as scheduler:
        _lazy_dashboard(scheduler)
        dashboard = f"http://{host}:{scheduler.http_server.port}/status"
        record = {"address": scheduler.address, "dashboard": dashboard, "pid": os.getpid()}
        path.write_text(json.dumps(record))
        print(json.dumps(record), flush=True)  # ready: the starter waits for this line
        last_seen = time.monotonic()
        had_task = False
        while not stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)
            now = time.monotonic()
            if scheduler.workers:
                had_task, last_seen = True, now
            elif now - last_seen > (LONELY_S if had_task else FIRST_TASK_S):
                break
    if (_read(path) or {}).get("pid") == os.getpid():
        path.unlink(missing_ok=True)


def _lazy_dashboard(scheduler: Any) -> None:
    """Dask's dashboard, connected when a page of it is first asked for: its import (bokeh's)
    takes a third of a second, which a cluster's start should not wait for, nor share its CPUs
    with. Its address is served from the start; the first request waits for it."""
    import importlib

    from tornado import web

    connected = asyncio.Event()
    connecting: list[asyncio.Task[None]] = []

    async def connect() -> None:
        module = await asyncio.to_thread(importlib.import_module, "distributed.dashboard.scheduler")
        module.connect(scheduler.http_application, scheduler.http_server, scheduler)
        scheduler.http_application.applications.remove(waiting)
        connected.set()

    class Wait(web.RequestHandler):
        async def get(self, *_: Any) -> None:
            if not connecting:
                connecting.append(asyncio.ensure_future(connect()))
            await connected.wait()
            self.redirect(self.request.uri or "/status")  # now served by the dashboard

    waiting = web.Application([(r"/.*", Wait)])
    scheduler.http_application.add_application(waiting)


def main(argv: Sequence[str]) -> None:
    """The scheduler's process: serve until stopped or lonely (argv: host, rendezvous file)."""
    asyncio.run(_serve(argv[0], Path(argv[1])))
