"""A cluster run's events as the recorder's columns, on the client's clock.

Each task reports its stages' ops and its own transfers (between a task's CPU and GPUs), the
tensors it sent to other tasks (bytes, when it began), when those it received arrived and how long
each stage waited for them, each on its task's clock: a tensor between tasks spans from its sending
to its arrival, and a stage's wait is a WAIT event on its first op's device whose peer is the
device of the tensor that arrived last (-1 when a control token ended it). Names become the
client's node and device ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placeviz.cluster.program import RunProgram
from placeviz.cluster.task import REPORTED_COLUMNS
from placeviz.contract import COLUMN_DEFAULTS, COLUMN_NAMES, EventKind, TimingSource
from placeviz.devices.context import Device
from placeviz.events.recorder import DTYPES


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
    """What a run across the cluster gave back: fetched values, each task's report."""

    values: dict[int, Any]  # id(tensor) -> value
    reports: list[tuple[TaskInfo, dict[str, Any]]]
    program: RunProgram  # the run's: what moves between tasks, the stages' first ops


_TRANSFER, _WAIT = int(EventKind.TRANSFER), int(EventKind.WAIT)
_CLOCK = int(TimingSource.CLOCK)


def run_columns(remote: RemoteRun, device_ids: dict[str, int]) -> dict[str, Any]:
    # A task runs no while loops in its plan: frame and iteration keep their defaults.
    rows: dict[str, list[int]] = {
        name: [] for name in COLUMN_NAMES if name != "run" and name not in COLUMN_DEFAULTS
    }

    def add(kind: int, t0: int, t1: int, node: int, device: int, peer: int, size: int, src: int):
        rows["kind"].append(kind)
        rows["t0"].append(t0)
        rows["t1"].append(t1)
        rows["node"].append(node)
        rows["device"].append(device)
        rows["stream"].append(device)
        rows["bytes"].append(size)
        rows["source"].append(src)
        rows["peer"].append(peer)

    tasks = {info.address: info for info, _ in remote.reports}
    arrived = {  # (receiving task, tensor name) -> when it arrived, on the client's clock
        (info.name, name): when + info.clock_offset_ns
        for info, report in remote.reports
        for _sender, names, when in report["received"]
        for name in names
    }
    transfers, heads = remote.program.transfers, remote.program.heads
    for task, report in remote.reports:
        offset = task.clock_offset_ns
        here = np.array([device_ids[name] for name in report["devices"]] + [-1])
        events = dict(zip(REPORTED_COLUMNS, report["events"]))
        for name in ("t0", "t1"):
            rows[name].extend((events[name] + offset).tolist())
        for name in ("device", "peer"):  # -1 (no peer) stays -1: ``here`` ends with it
            rows[name].extend(here[events[name]].tolist())
        rows["stream"].extend(here[events["device"]].tolist())
        for name in ("kind", "node", "bytes", "source"):
            rows[name].extend(events[name].tolist())
        for address, names, sizes, t0, _t1 in report["sent"]:
            receiver = tasks[address].name
            for name, size in zip(names, sizes):
                tensor, src, dst = transfers[name, receiver]
                began = t0 + offset
                add(
                    _TRANSFER,
                    began,
                    max(began, arrived[receiver, name]),
                    tensor.op.id,
                    device_ids[dst.name],
                    device_ids[src.name],
                    size,
                    _CLOCK,
                )
        for first, began, until in report["waits"]:
            if until <= began:
                continue
            head = heads[first]
            peer, last = -1, -1
            for sender, names, when in report["received"]:  # the last arrival the stage awaited
                awaited = [n for n in names if n in head.receives]
                if when <= until and when >= last and (awaited or sender in head.signalled_by):
                    last = when
                    # a control token carries no device; sent with tensors, the tensor's
                    peer = device_ids[transfers[awaited[-1], task.name][1].name] if awaited else -1
            device = device_ids[head.device.name]
            add(_WAIT, began + offset, until + offset, head.op.id, device, peer, 0, _CLOCK)
    return {name: np.asarray(values, dtype=DTYPES[name]) for name, values in rows.items()}
