"""The Dask scheduler of a cluster: one process per cluster spec, found by every task of it.

TensorFlow's servers find each other through the cluster spec alone. Dask workers need a
scheduler, so the first task of a cluster to start launches one (its own process, so that any task
may die without taking the cluster with it) and writes its address to a rendezvous file named after
the cluster spec; tasks started later, from any process of this machine, read it there. The
scheduler listens on the host of the cluster's first task (loopback for ``localhost``), over TLS
when it is turned on (``security.py``), and exits
by itself once no task has been connected for a while; ``release`` stops it at once when the
last task of this machine stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from placeviz.cluster.security import connection_args, scheme, security
from placeviz.errors import UnavailableError
from placeviz.train.cluster_spec import ClusterSpec

START_TIMEOUT_S = 30.0
# The scheduler exits after this long without a task (and a first task has this long to come).
LONELY_S = 10.0
FIRST_TASK_S = 120.0

T = TypeVar("T")


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


def rendezvous_dir() -> Path:
    path = Path(tempfile.gettempdir()) / f"placeviz-{os.getuid()}" / "clusters"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


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


@contextlib.contextmanager
def locked(key: str) -> Iterator[Path]:
    directory = rendezvous_dir()
    with open(directory / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield directory / f"{key}.json"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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


def scheduler_for(cluster: ClusterSpec) -> dict[str, Any]:
    """The cluster's scheduler (address, dashboard, pid), started here when none runs."""
    key = cluster_key(cluster)
    with locked(key) as path:
        found = _read(path)
        if found is not None:
            return found
        _, tasks = _jobs(cluster)[0]
        host, _ = task_host_port(tasks[min(tasks)])
        with open(rendezvous_dir() / f"{key}.scheduler.log", "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "placeviz.cluster.coordinator", host, str(path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # a Ctrl-C in the notebook's terminal is not the cluster's
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            found = _read(path)
            if found is not None and found["pid"] == process.pid:
                return found
            if process.poll() is not None:
                break
            time.sleep(0.05)
        process.kill()
        raise UnavailableError(
            f"The scheduler of cluster {cluster} did not start on {host} (see "
            f"{rendezvous_dir() / f'{key}.scheduler.log'})"
        )


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


async def _serve(host: str, path: Path) -> None:
    from distributed import Scheduler

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with Scheduler(
        host=host,
        port=0,
        protocol=scheme(),
        security=security(),
        dashboard_address=f"{host}:0",
    ) as scheduler:
        dashboard = f"http://{host}:{scheduler.http_server.port}/status"
        record = {"address": scheduler.address, "dashboard": dashboard, "pid": os.getpid()}
        path.write_text(json.dumps(record))
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


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], Path(sys.argv[2])))
