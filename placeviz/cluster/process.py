"""One cluster task's process: a Dask worker on the task's address, with the handlers its steps
need (``steps.py``), until it is stopped, its scheduler goes away or the process that made its
``Server`` ends."""

from __future__ import annotations

import asyncio
import os
import signal

from placeviz.cluster.cluster_spec import ClusterSpec
from placeviz.cluster.coordinator import check_loop_each_second, scheduler_for, task_host_port
from placeviz.cluster.steps import StepServer
from placeviz.cluster.task import serving, task_name
from placeviz.devices import context as device_context


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
    serving(cluster)
    device_context.set_process_task(job, task)
    host, port = task_host_port(cluster.task_address(job, task))
    if parent is not None:
        try:
            parent_pidfd = os.pidfd_open(parent)
        except ProcessLookupError:
            return  # it ended before the task started
    address = scheduler or scheduler_for(cluster)["address"]
    _share_cores(cluster, host)
    asyncio.run(_work(address, host, port, task_name(job, task), parent_pidfd))


def _share_cores(cluster: ClusterSpec, host: str) -> None:
    """Give this task's BLAS its share of the host's cores: the tasks the cluster spec puts on
    one host run side by side, and BLAS threads that wait by spinning would take the cores
    their neighbours (and this task's own comms) need."""
    from threadpoolctl import threadpool_limits

    neighbours = sum(
        task_host_port(cluster.task_address(job, index))[0] == host
        for job in cluster.jobs
        for index in cluster.task_indices(job)
    )
    threadpool_limits(max(1, (os.cpu_count() or 1) // max(neighbours, 1)))


def skip_offload_sizing() -> None:
    """Dask walks every message it sends (``sizeof``: 27-51 us for a step's message, its reply or
    a stage's tensors) to choose whether to serialize it on another thread. A step's tensors go
    as pickle-5 frames, never copied, so that thread would buy nothing: this process (a task's,
    placeviz's own) never offloads. The setting (``distributed.comm.offload``) is read when Dask
    is imported, so it is set where Dask reads it. The master, in the user's process, turns it
    off for its own connections only (``ConnectionPool.allow_offload``)."""
    from distributed.comm import utils as comm_utils

    comm_utils.OFFLOAD_THRESHOLD = False


async def _work(scheduler: str, host: str, port: int, name: str, parent_pidfd: int | None) -> None:
    import dask
    from distributed import Worker

    from placeviz.cluster.security import scheme, security

    # Dask's statistical profiler samples every thread's stack 100 times a second: CPU the
    # host's other tasks need, for a view of Dask tasks a placeviz task does not run.
    dask.config.set({"distributed.worker.profile.enabled": False})
    check_loop_each_second()
    skip_offload_sizing()

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
    steps = StepServer(worker)
    steps.register()
    print(f"placeviz task {name} listening on {worker.address} (pid {os.getpid()})", flush=True)
    finished = asyncio.ensure_future(worker.finished())
    stopped = asyncio.ensure_future(stop.wait())
    waits = [finished, stopped]
    if parent_pidfd is not None:
        waits.append(asyncio.ensure_future(_outlived(parent_pidfd)))
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if not finished.done():
        await worker.close(reason="placeviz server stopped")
    steps.close()


async def _outlived(pidfd: int) -> None:
    """Returns once the process behind ``pidfd`` has ended (the task is then an orphan)."""
    ended = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(pidfd, ended.set)
    try:
        await ended.wait()
    finally:
        loop.remove_reader(pidfd)
