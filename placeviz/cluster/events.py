"""A cluster run's events as the recorder's columns, on the client's clock.

Each task reports its stages' ops and its own transfers (between a task's CPU and GPUs), the
tensors it sent to other tasks (bytes, when it began), when those it received arrived and how long
each stage waited for them, each on its task's clock: a tensor between tasks spans from its sending
to its arrival, and a stage's wait is a WAIT event on its first op's device whose peer is the
device of the tensor that arrived last (-1 when a control token ended it). Names become the
client's node and device ids.
"""

from __future__ import annotations

import pickle
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from placeviz.cluster.frames import from_parts
from placeviz.cluster.program import RunProgram
from placeviz.cluster.task import REPORTED_COLUMNS
from placeviz.contract import COLUMN_DEFAULTS, COLUMN_NAMES, EventKind, TimingSource
from placeviz.devices.context import Device
from placeviz.events.recorder import DTYPES
from placeviz.runtime.remote import RemoteEvents


@dataclass
class TaskInfo:
    name: str  # '/job:ps/task:0'
    address: str  # the Dask worker's, 'tcp+asyncio://127.0.0.1:2222'
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


# The columns a task's rows fill (frame and iteration keep their defaults: a task runs no while
# loops in its plan); its rows are int64 tables, a row per column of REPORTED_COLUMNS.
_FILLED = tuple(n for n in COLUMN_NAMES if n != "run" and n not in COLUMN_DEFAULTS)
_T0, _T1, _DEVICE, _PEER = (REPORTED_COLUMNS.index(n) for n in ("t0", "t1", "device", "peer"))


_KEPT = ("devices", "sent", "received", "waits")  # of a report, read by run_columns


def remote_events(remote: RemoteRun, device_ids: Mapping[str, int]) -> RemoteEvents:
    """The run's events, counted now and made into columns (``run_columns``) when read.

    Until then the step's reports wait as one pickled bytes object: what the columns are made
    of and no more (no fetched value), and nothing the garbage collector walks (as lists, the
    reports of thousands of unread steps would make every full collection take ~100 ms longer).
    ``device_ids`` is the session's, which only ever numbers new devices.
    """
    tasks = {info.address for info, _ in remote.reports}
    count = 0
    kept = []
    for _, report in remote.reports:
        events = from_parts(*report["events"])
        count += events.shape[1]
        count += sum(len(names) for _, names, *_ in _sends(report, tasks))
        count += sum(1 for _ in _waits(report))
        kept.append({"events": events, **{key: report[key] for key in _KEPT}})
    packed = pickle.dumps(kept, pickle.HIGHEST_PROTOCOL)
    infos, program = [info for info, _ in remote.reports], remote.program

    def build() -> dict[str, Any]:
        reports = list(zip(infos, pickle.loads(packed)))
        return run_columns(RemoteRun({}, reports, program), device_ids)

    return RemoteEvents(count, build)


def _sends(report: dict[str, Any], tasks: Container[str]) -> Iterator[list[Any]]:
    """The task's sends to tasks that reported (what a receiver that did not, a failed step's,
    took is unknown): [to, names, sizes, when it began, when its bytes were written]."""
    return (sent for sent in report["sent"] if sent[0] in tasks)


def _waits(report: dict[str, Any]) -> Iterator[list[Any]]:
    """The task's stages' waits that lasted: [first op of the stage, from, until]."""
    return (wait for wait in report["waits"] if wait[2] > wait[1])


def run_columns(remote: RemoteRun, device_ids: Mapping[str, int]) -> dict[str, Any]:
    """Each task's rows in turn: its ops' events as it sent them (shifted onto the client's
    clock and devices), then its sends and its stages' waits; one table for all, cut into
    columns at the end. The reports as ``remote_events`` keeps them: their events an array."""
    tasks = {info.address: info for info, _ in remote.reports}
    arrived = {  # (receiving task, tensor name) -> when it arrived, on the client's clock
        (info.name, name): when + info.clock_offset_ns
        for info, report in remote.reports
        for _sender, names, when in report["received"]
        for name in names
    }
    tables: list[np.ndarray] = []
    for task, report in remote.reports:
        here = np.array([device_ids[name] for name in report["devices"]] + [-1])
        events = np.array(report["events"], np.int64)  # a copy, shifted below
        events[_T0] += task.clock_offset_ns
        events[_T1] += task.clock_offset_ns
        events[_DEVICE] = here[events[_DEVICE]]
        events[_PEER] = here[events[_PEER]]  # -1 (no peer) stays -1: ``here`` ends with it
        tables.append(events)
        rows = _rows(task, report, tasks, arrived, remote.program, device_ids)
        if rows:
            tables.append(np.array(rows, np.int64).T)
    if tables:
        table = np.concatenate(tables, axis=1)
    else:
        table = np.zeros((len(REPORTED_COLUMNS), 0), np.int64)
    columns = dict(zip(REPORTED_COLUMNS, table))
    columns["stream"] = columns["device"]
    return {name: columns[name].astype(DTYPES[name]) for name in _FILLED}


def _rows(
    task: TaskInfo,
    report: dict[str, Any],
    tasks: dict[str, TaskInfo],
    arrived: dict[tuple[str, str], int],
    program: RunProgram,
    device_ids: Mapping[str, int],
) -> list[tuple[int, ...]]:
    """The task's sends (a TRANSFER from its start to the tensor's arrival, or to its bytes'
    writing if its receiver never took it) and its stages' waits, as rows of REPORTED_COLUMNS'
    fields."""
    rows = []
    offset = task.clock_offset_ns
    transfers, heads = program.transfers, program.heads
    for address, names, sizes, t0, written in _sends(report, tasks):
        receiver = tasks[address].name
        for name, size in zip(names, sizes):
            tensor, src, dst = transfers[name, receiver]
            began = t0 + offset
            # not taken by a receiver whose step had ended (failed, aborted): until written
            end = max(began, arrived.get((receiver, name), written + offset))
            to, source = device_ids[dst.name], device_ids[src.name]
            rows.append((_TRANSFER, began, end, tensor.op.id, to, source, size, _CLOCK))
    for first, began, until in _waits(report):
        head = heads[first]
        peer, last = -1, -1
        for sender, names, when in report["received"]:  # the last arrival the stage awaited
            awaited = [n for n in names if n in head.receives]
            if when <= until and when >= last and (awaited or sender in head.signalled_by):
                last = when
                # a control token carries no device; sent with tensors, the tensor's
                peer = device_ids[transfers[awaited[-1], task.name][1].name] if awaited else -1
        device = device_ids[head.device.name]
        rows.append((_WAIT, began + offset, until + offset, head.op.id, device, peer, 0, _CLOCK))
    return rows
