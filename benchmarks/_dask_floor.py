"""The floor Dask's comms set under a placeviz cluster step: the step's own messages, replayed
between bare Dask servers, with no kernels, sessions or events (bench_cluster.py's floor table).

``floor_spec`` reads a session's program for a run (``placeviz/cluster/program.py``): each task's
stages in order, what each waits for and what it sends where, with each tensor's bytes, what the
client feeds each task, and how long each op's kernel took in the session's last run.
``measure`` replays it in a fresh process: a Dask ``Server`` process per task replays its stages
each step (it waits in placeviz's ``Mailbox`` for what the other tasks send, then sends
zero-filled buffers of the same sizes straight to them, as placeviz's tasks send tensors) and
answers the client, which sends every task its step message (the fed bytes to the tasks that read
them) and times the steps, as placeviz's master does. Given kernel times (placeviz's, or
TensorFlow's from tf_cluster_step.py), each stage also keeps its core busy for as long as its
ops' kernels took.

Whatever a placeviz step costs beyond the replay with its own kernels' times is placeviz's
(events, sessions, the master); the replay alone is the cluster's comms (Dask's rpc and
serialization over the comm placeviz's cluster uses, ``security.scheme``) and event loops, in as
many processes.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

RESULT_MARKER = "DASK-FLOOR "


def floor_spec(session: Any, fetch: Any) -> dict[str, Any]:
    """The messages of ``session``'s run of ``fetch`` (run at least once): per task its stages,
    with tasks named by index and each sent tensor's bytes; the bytes fed to each task."""
    master = session._remote
    programs = [
        (plan, program)
        for plan, _key, program in master._programs.values()
        if any(f is fetch for f in plan.fetches)
    ]
    plan, program = programs[-1]
    fed = {t.name: _nbytes(t) for t in plan.feeds}
    sizes = {tensor.name: _nbytes(tensor) for tensor, _src, _dst in program.transfers.values()}
    index = {address: i for i, (address, _stages, _feeds) in enumerate(program.messages)}
    tasks = []
    for _address, stages, feeds in program.messages:
        tasks.append(
            {
                "feed_bytes": [fed[name] for name in feeds],
                "stages": [
                    {
                        "awaits": [*stage["receives"], *stage["waits"]],
                        "ops": stage["ops"],
                        "sends": {
                            index[to]: {name: sizes[name] for name in names}
                            for to, names in stage["sends"].items()
                        },
                        "signals": {index[to]: tokens for to, tokens in stage["signals"].items()},
                    }
                    for stage in stages
                ],
            }
        )
    return {"tasks": tasks, "placeviz_kernel_ns": op_times(session)}


def op_times(session: Any) -> dict[str, int]:
    """How long each op ran in the session's last run, by name (its kernels' time)."""
    from placeviz.contract import EventKind

    columns = session.last_run_events().columns
    ops = session.graph.get_operations()
    ran = columns["kind"] == EventKind.OP
    times: dict[str, int] = collections.defaultdict(int)
    for node, t0, t1 in zip(columns["node"][ran], columns["t0"][ran], columns["t1"][ran]):
        times[ops[node].name] += int(t1 - t0)
    return times


def _nbytes(tensor: Any) -> int:
    elements = tensor.shape.num_elements()
    if elements is None:
        raise ValueError(f"{tensor.name} has no static shape: its bytes are not known")
    return elements * tensor.dtype.np.itemsize


def measure(
    spec: dict[str, Any],
    steps: int,
    warmup: int,
    kernel_ns: Mapping[str, int] | None = None,
    timeout: float = 300,
) -> float:
    """The median step of ``spec``'s messages on bare Dask servers, from a fresh process; with
    ``kernel_ns`` (op name -> ns) each stage is also busy for as long as its ops' kernels take."""
    timed = {
        "tasks": [
            {
                **task,
                "stages": [
                    {**stage, "kernel_ns": sum((kernel_ns or {}).get(op, 0) for op in stage["ops"])}
                    for stage in task["stages"]
                ],
            }
            for task in spec["tasks"]
        ]
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(timed, file)
    with_spec = Path(file.name)
    command = [sys.executable, __file__, str(with_spec), str(steps), str(warmup)]
    # A group of its own: a replay past its time goes with its task servers.
    replay = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = replay.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(replay.pid, signal.SIGKILL)
        replay.communicate()
        raise
    finally:
        with_spec.unlink(missing_ok=True)
    if replay.returncode:
        raise subprocess.CalledProcessError(replay.returncode, command, out, err)
    line = next(x for x in reversed(out.splitlines()) if x.startswith(RESULT_MARKER))
    return float(json.loads(line[len(RESULT_MARKER) :]))


# -- the replay: a server per task, and the client ------------------------------------------------
def _serve(spec: dict[str, Any], me: int) -> None:
    """Task ``me``: listen on a free loopback port, say it, then replay its stages each step
    (waiting in placeviz's own ``Mailbox``, sending as its tasks do: ``as_frames``)."""
    from distributed.core import ConnectionPool, Server

    from placeviz.cluster.frames import as_frames, tensors_of
    from placeviz.cluster.process import skip_offload_sizing
    from placeviz.cluster.program import destinations
    from placeviz.cluster.security import scheme
    from placeviz.cluster.steps import Mailbox

    skip_offload_sizing()  # as placeviz's tasks and master send

    stages = spec["tasks"][me]["stages"]
    buffers: dict[str, np.ndarray] = {}  # each sent tensor's bytes, made once (a variable's)
    for stage in stages:
        for names in stage["sends"].values():
            for name, size in names.items():
                buffers[name] = np.zeros(size, np.uint8)

    async def main() -> None:
        pool = ConnectionPool()
        await pool.start()
        addresses: list[str] = []
        mailbox = Mailbox()

        async def send(to: int, step: str, names: dict[str, int], tokens: list[str]) -> None:
            values = as_frames({name: buffers[name] for name in names})
            await pool(addresses[to]).tensors(
                step=step, sender=str(me), values=values, tokens=tokens, reply=False
            )

        async def step(step: str, feeds: Any = None, peers: list[str] | None = None) -> str:
            if peers is not None:
                addresses[:] = peers
            sends = []
            had: set[str] = set()  # a tensor two stages read arrives once, as in steps.py
            for stage in stages:
                awaits = [name for name in stage["awaits"] if name not in had]
                if awaits:
                    had.update(await mailbox.take(step, awaits))
                if stage["kernel_ns"]:  # busy, as the stage's kernels keep a core
                    until = time.perf_counter_ns() + stage["kernel_ns"]
                    while time.perf_counter_ns() < until:
                        pass
                for to in destinations(stage):  # json made the task indices strings
                    names = stage["sends"].get(to, {})
                    tokens = stage["signals"].get(to, [])
                    sends.append(asyncio.ensure_future(send(int(to), step, names, tokens)))
                if sends:
                    await asyncio.sleep(0)
            await asyncio.gather(*sends)
            mailbox.finish(step)
            return "OK"

        def tensors(step: str, sender: str, values: Any, tokens: list[str]) -> None:
            mailbox.put(step, sender, tensors_of(values), tokens)

        server = Server({"step": step, "tensors": tensors})
        await server.listen(f"{scheme()}://127.0.0.1:0")
        print(server.address, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


async def _client(spec: dict[str, Any], addresses: list[str], steps: int, warmup: int) -> float:
    from distributed.core import ConnectionPool

    from placeviz.cluster.frames import as_frames

    pool = ConnectionPool()
    pool.allow_offload = False  # as placeviz's master
    await pool.start()
    feeds = [
        {f"feed{i}": np.zeros(size, np.uint8) for i, size in enumerate(task["feed_bytes"])}
        for task in spec["tasks"]
    ]
    times = []
    for n in range(warmup + steps):
        began = time.perf_counter()
        await asyncio.gather(
            *(
                pool(address).step(
                    step=f"s{n}",
                    feeds=as_frames(feeds[i]),
                    peers=addresses if n == 0 else None,
                )
                for i, address in enumerate(addresses)
            )
        )
        times.append(time.perf_counter() - began)
    return statistics.median(times[warmup:])


def main() -> None:
    path, steps, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    spec = json.loads(Path(path).read_text())
    if len(sys.argv) > 4:  # a task's server
        _serve(spec, int(sys.argv[4]))
        return
    servers = [
        subprocess.Popen(
            [sys.executable, __file__, path, "0", "0", str(i)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(len(spec["tasks"]))
    ]
    try:
        addresses = [server.stdout.readline().strip() for server in servers]  # type: ignore[union-attr]
        median = asyncio.run(_client(spec, addresses, steps, warmup))
    finally:
        for server in servers:
            server.kill()
            server.wait()
    print(RESULT_MARKER + json.dumps(median))


if __name__ == "__main__":
    main()
