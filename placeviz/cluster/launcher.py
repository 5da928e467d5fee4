"""The process that starts this process's cluster tasks by forking itself.

A new interpreter takes most of a second to import placeviz and Dask; a fork of one that has
imported them takes milliseconds. So the first ``Server`` of a process starts a launcher (its own
process, placeviz and Dask imported once), and every task is a fork of it, each still a process
of its own: its own session, stdout (its first line says where it listens) and log, and it can
die alone. The launcher imports Dask first and what a task runs after (its server, the op
types, the session; not the Python API that builds graphs), when it has nothing to do: a
cluster's scheduler, which needs Dask only, is forked (and imports its dashboard) while the
launcher imports what tasks need.

Each task is a child of the process that made its ``Server``, as a task started by ``subprocess``
would be: the launcher forks it through an intermediate process that exits at once, while that
process is a child subreaper (Linux's ``PR_SET_CHILD_SUBREAPER``), so the orphaned task is adopted
by it, not by init. A task ends when that process ends: it watches that process's pidfd, opened
by the launcher while it surely lived. The launcher ends when its channel closes: when the last
``Server`` it started stopped, or when the process that started it ended.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import pkgutil
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any

from placeviz.cluster.coordinator import lean_command
from placeviz.cluster.rendezvous import rendezvous_dir
from placeviz.errors import UnavailableError

START_TIMEOUT_S = 60.0
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37
_MESSAGE_BYTES = 1 << 22


@dataclass
class TaskRequest:
    """One task to fork: the arguments of ``task.serve``, its environment, folder and log (those
    of the process that made its ``Server``, as a subprocess would have)."""

    cluster: dict[str, Any]
    job: str
    task: int
    scheduler: str
    env: dict[str, str]
    cwd: str
    log: str


class TaskProcess:
    """A forked task, seen from the process that made its ``Server``: ``subprocess.Popen``'s
    ``pid``, ``poll``, ``wait``, ``terminate`` and ``kill``, through the task's pidfd (race-free:
    the task is this process's child, so its pid is not reused before it is reaped here)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)

    def poll(self) -> int | None:
        return self.wait(0) if self._ended(0) else None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired(f"task process {self.pid}", timeout or 0)
            try:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:  # adopted by another reaper (no subreaper here)
                self.returncode = -1
            os.close(self._pidfd)
        return self.returncode

    def _ended(self, timeout: float | None) -> bool:
        return self.returncode is not None or bool(select.select([self._pidfd], [], [], timeout)[0])

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Launcher:
    """This process's side of the launcher: its process and the channel to it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log_path = rendezvous_dir() / f"launcher-{os.getpid()}.log"
        with open(self.log_path, "w") as log, theirs:
            self.process = subprocess.Popen(
                lean_command("placeviz.cluster.launcher", str(theirs.fileno())),
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # a Ctrl-C in the notebook's terminal is not the cluster's
            )
        self._channel = ours
        self._channel.settimeout(START_TIMEOUT_S)
        self._lock = threading.Lock()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self, requests: Sequence[TaskRequest], stdouts: Sequence[int]) -> list[TaskProcess]:
        """Fork a task per request, writing its stdout to the matching pipe's end; returns once
        they run (not once they listen: each says so on its stdout)."""
        pids = self._ask({"tasks": [asdict(r) for r in requests]}, stdouts)
        return [TaskProcess(pid) for pid in pids]

    def fork_scheduler(self, host: str, path: Path, log: Path) -> tuple[int, IO[bytes]]:
        """``coordinator.scheduler_for``'s ``fork``: a scheduler process (not a child of the
        launcher's, since it serves every process of the machine), its pid and stdout."""
        read, write = os.pipe()
        try:
            request = [host, str(path), str(log), dict(os.environ), os.getcwd()]
            (pid,) = self._ask({"scheduler": request}, [write])
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        return pid, os.fdopen(read, "rb")

    def _ask(self, request: dict[str, Any], fds: Sequence[int]) -> list[int]:
        with self._lock, _adopting_orphans():
            try:
                socket.send_fds(self._channel, [json.dumps(request).encode()], list(fds))
                reply = self._channel.recv(_MESSAGE_BYTES)
            except OSError as error:  # the launcher died, or did not answer in time
                reply = json.dumps({"error": str(error)}).encode()
        answer = json.loads(reply) if reply else {"error": "the launcher ended"}
        if "error" in answer:
            tail = "\n".join(self.log_path.read_text().strip().splitlines()[-5:])
            raise UnavailableError(f"Could not start cluster processes: {answer['error']} {tail}")
        return answer["pids"]

    def close(self) -> None:
        self._channel.close()  # the launcher reads the end of its channel and exits
        if self.process.wait() == 0:
            self.log_path.unlink(missing_ok=True)


@contextlib.contextmanager
def _adopting_orphans() -> Iterator[None]:
    """This process is a child subreaper while the launcher forks: the tasks, orphaned when
    their intermediate process exits, become its children."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    was = ctypes.c_int(0)
    prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(was), 0, 0, 0)
    prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        prctl(_PR_SET_CHILD_SUBREAPER, was.value, 0, 0, 0)


# -- the launcher's process ---------------------------------------------------------------------
def main(argv: Sequence[str]) -> None:
    """The launcher's process (argv: its channel's fd), started with placeviz unexecuted."""
    channel = socket.socket(fileno=int(argv[0]))
    parent = os.getppid()
    parent_pidfd = os.pidfd_open(parent)
    if os.getppid() != parent:  # the parent ended before its pidfd was opened
        os._exit(0)
    from distributed import Scheduler, Worker  # noqa: F401  (what every fork needs)

    ready_for_tasks = False
    while True:
        if not ready_for_tasks and not select.select([channel], [], [], 0)[0]:
            ready_for_tasks = _import_task()
        try:
            message, fds, _, _ = socket.recv_fds(channel, _MESSAGE_BYTES, 1024)
        except OSError:
            message, fds = b"", []
        if not message:  # the channel closed: nothing more to start
            os._exit(0)
        request = json.loads(message)
        try:
            if "scheduler" in request:
                host, path, log, env, cwd = request["scheduler"]
                run = partial(_run_scheduler, host, path, log, env, cwd, fds[0], parent_pidfd)
                pids = _fork([(run, fds[0])], fds, channel)
            else:
                ready_for_tasks = ready_for_tasks or _import_task()
                runs = [
                    (partial(_run_task, TaskRequest(**r), out, parent_pidfd), out)
                    for r, out in zip(request["tasks"], fds)
                ]
                pids = _fork(runs, fds, channel)
            reply: dict[str, Any] = {"pids": pids}
        except OSError as error:
            reply = {"error": f"fork failed: {error}"}
        finally:
            for fd in fds:
                os.close(fd)
        channel.send(json.dumps(reply).encode())


def _import_task() -> bool:
    """Import what a task runs: its server, every op type a partition may hold, the session
    that runs them; not the rest of the graph API (Keras, the layers, the optimizers' Python
    side: 0.02-0.03 s of placeviz's 0.08-0.11 s import beside Dask's, bytecode compiled, measured
    here), which builds graphs, never runs them."""
    import dask.config
    from distributed.versions import get_versions

    from placeviz.cluster import process  # noqa: F401
    from placeviz.graph import ops
    from placeviz.runtime import session  # noqa: F401

    for module in pkgutil.iter_modules(ops.__path__):
        importlib.import_module(f"{ops.__name__}.{module.name}")
    # What every task imports as it starts, once here rather than in each: its worker's HTTP
    # routes (/metrics imports prometheus_client: 70 ms a task, measured) and threadpoolctl.
    for route in dask.config.get("distributed.worker.http.routes"):
        importlib.import_module(route)
    import threadpoolctl  # noqa: F401

    # A Dask worker tells its scheduler the versions of a dozen packages, read from their
    # metadata on disk (~25 ms) and cached: read once here, every task forks with them.
    get_versions()
    return True


def _fork(
    runs: Sequence[tuple[Callable[[], None], int]], batch: Sequence[int], channel: socket.socket
) -> list[int]:
    """The pids of processes that each run one of ``runs``' functions (which never return),
    forked through one intermediate process, once that process exited. ``batch``: the fds the
    request brought; each process keeps only its own of them (``runs``' fd), so that each pipe
    ends with its process. One intermediate for all: 9 tasks through an intermediate each took
    18 forks of this process (Dask and placeviz imported), about 300 ms here; now 10 forks,
    120-220 ms."""
    gc.freeze()  # the forks' collections then leave this process's objects (and pages) alone
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        code = 1
        try:
            os.close(read)
            pids = []
            for run, keep in runs:
                pid = os.fork()
                if pid == 0:
                    os.close(write)
                    channel.close()
                    for fd in batch:
                        if fd != keep:
                            os.close(fd)
                    run()
                pids.append(pid)
            os.write(write, " ".join(map(str, pids)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        pids = [int(pid) for pid in pipe.read().split()]
    os.waitpid(middle, 0)
    if len(pids) != len(runs):
        raise OSError("could not fork")
    return pids


def _run_task(request: TaskRequest, stdout: int, parent_pidfd: int) -> None:
    from placeviz.cluster.cluster_spec import ClusterSpec
    from placeviz.cluster.process import serve

    def serve_task() -> None:
        cluster = ClusterSpec(request.cluster)
        serve(cluster, request.job, request.task, request.scheduler, parent_pidfd=parent_pidfd)

    _become(stdout, request.log, "w", request.env, request.cwd, serve_task)


def _run_scheduler(
    host: str,
    path: str,
    log: str,
    env: dict[str, str],
    cwd: str,
    stdout: int,
    parent_pidfd: int,
) -> None:
    from placeviz.cluster import coordinator

    os.close(parent_pidfd)  # it outlives the launcher's parent: it serves the whole machine
    _become(stdout, log, "a", env, cwd, lambda: coordinator.main([host, path]))


def _become(
    stdout: int, log: str, mode: str, env: dict[str, str], cwd: str, run: Callable[[], None]
) -> None:
    """A forked process of its own: its session, stdio, environment and folder; runs ``run``
    and exits (never returns)."""
    code = 1
    try:
        os.setsid()  # a Ctrl-C in the notebook's terminal is not the cluster's
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
        log_fd = os.open(log, flags, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        for fd, target in ((devnull, 0), (stdout, 1), (log_fd, 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(cwd)
        dask_before = _dask_environment()
        os.environ.clear()
        os.environ.update(env)
        if _dask_environment() != dask_before:  # Dask read the launcher's at import
            import dask.config

            dask.config.refresh()
        run()
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _dask_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("DASK_")}
