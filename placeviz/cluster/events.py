"""A cluster run's events as the recorder's columns, on the client's clock.

Each partition reports its ops and its task's own transfers (between a task's CPU and GPUs), on
its task's clock; Dask's transfer log on the receiving worker gives each tensor that crossed
between tasks, with its bytes. Names become the client's node and device ids.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from placeviz.cluster.master import RemoteRun
from placeviz.contract import COLUMN_DEFAULTS, COLUMN_NAMES, EventKind, TimingSource
from placeviz.events.recorder import DTYPES
from placeviz.graph.core import Graph

_TRANSFER = int(EventKind.TRANSFER)
_ALLOC, _FREE = int(EventKind.ALLOC), int(EventKind.FREE)
_CLOCK = int(TimingSource.CLOCK)


def run_columns(remote: RemoteRun, graph: Graph, device_ids: dict[str, int]) -> dict[str, Any]:
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

    ops = graph._ops_by_name
    for task, report in remote.reports:
        offset = task.clock_offset_ns
        events = report["events"]
        for i, kind in enumerate(events["kind"]):
            peer = events["peer"][i]
            add(
                kind,
                events["t0"][i] + offset,
                events["t1"][i] + offset,
                ops[events["op"][i]]._id,
                device_ids[events["device"][i]],
                device_ids[peer] if peer else -1,
                events["bytes"][i],
                events["source"][i],
            )
        for received in report["received"]:
            for key, size in received["keys"].items():
                tensor, src, dst = remote.transfers[key, task.name]
                add(
                    _TRANSFER,
                    received["t0"] + offset,
                    received["t1"] + offset,
                    tensor.op._id,
                    device_ids[dst.name],
                    device_ids[src.name],
                    size,
                    _CLOCK,
                )
    return {name: np.asarray(values, dtype=DTYPES[name]) for name, values in rows.items()}


def peak_bytes(columns: dict[str, np.ndarray]) -> dict[int, int]:
    """The most bytes each device held at once in the run (its task records them in order)."""
    kinds = columns["kind"]
    memory = (kinds == _ALLOC) | (kinds == _FREE)
    change = np.where(kinds[memory] == _ALLOC, 1, -1) * columns["bytes"][memory].astype(np.int64)
    devices = columns["device"][memory]
    return {
        int(device): int(np.cumsum(change[devices == device]).max())
        for device in np.unique(devices)
    }
