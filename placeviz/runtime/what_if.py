"""``trace.what_if(moves=..., devices=...)``: the trace's last run again, with some ops on other
devices (or another number of GPUs), as a prediction.

The run is laid out as ``simulation.TimelineModel`` lays out a run on simulated GPUs, in the order
the run recorded its steps: each device runs one op at a time, copies into a device use its copy
engine, a step starts when its inputs have arrived. An op that stays where it ran keeps the time
it took; a moved op, and a tensor that crosses devices only now, is timed by the cost model. So
with nothing moved the prediction repeats the run's modeled times.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeviz.contract import COLUMN_NAMES, EVENT_COLUMNS, EventKind, ReasonKind, TimingSource
from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.events.trace import Trace
from placeviz.graph.core import Graph, Operation
from placeviz.placement.colocation import ColocationIndex
from placeviz.placement.reason import short_name
from placeviz.runtime.cost_model import RooflineCostModel
from placeviz.runtime.document_tables import placed_edge_record, placed_node_record, reason_record
from placeviz.runtime.simulation import copy_seconds, lay_out_steps, link_bandwidth

_NAMED_MOVES = 3  # moves to one device named one by one in the question; more by their scope


class WhatIf:
    """What a session's Trace needs to predict another placement of its run."""

    def __init__(self, graph: Graph, devices: Sequence[Device]) -> None:
        self.graph = graph
        self.devices = devices

    def predict(
        self,
        trace: Trace,
        moves: Mapping[str, str] | None = None,
        devices: int | Mapping[str, int] | None = None,
    ) -> Trace:
        gpus = _gpu_count(devices)
        machine = self._devices(gpus)
        where = [self._relocated(i, machine) for i in range(len(self.devices))]  # session -> here
        ops = {op.id: op for op in self.graph.get_operations()}
        run = _last_run(trace)
        ev = trace.events
        rows = np.flatnonzero(
            (ev["run"] == run["id"])
            & np.isin(ev["kind"], [int(EventKind.OP), int(EventKind.TRANSFER)])
        )
        is_op = ev["kind"][rows] == int(EventKind.OP)
        ran = {int(ev["node"][r]): int(r) for r in rows[is_op]}
        old_device = {node: int(ev["device"][r]) for node, r in ran.items()}
        # Every placed op's device in the prediction (a fed value is there when the run starts).
        new_device = {
            n["id"]: where[n["device"]]
            for n in trace.nodes
            if n["device"] is not None and n["id"] in ops
        }
        new_device.update({node: where[d] for node, d in old_device.items()})
        moved = self._apply(moves or {}, ops, machine, new_device)
        model = RooflineCostModel(machine)

        def sources(node: int) -> list[int]:
            return list(dict.fromkeys(t.op.id for t in ops[node].inputs if t.op.id in new_device))

        needed = {  # (tensor's op, device) for every input now on another device
            (source, new_device[node])
            for node in ran
            for source in sources(node)
            if new_device[source] != new_device[node]
        }
        recorded = {  # (op, from, to) in the prediction's devices -> the run's copy
            (int(ev["node"][r]), where[ev["peer"][r]], where[ev["device"][r]]): int(r)
            for r in rows[~is_op]
        }
        steps: list[_Step] = []
        copied: set[tuple[int, int]] = set()

        def copy(node: int, device: int) -> None:
            row = recorded.get((node, new_device[node], device))
            size = int(ev["bytes"][row]) if row is not None else 0
            size = size or sum(model.nbytes(t) for t in ops[node].outputs)
            if row is not None:
                duration = int(ev["t1"][row] - ev["t0"][row])
            else:
                duration = _copy_ns(size, machine[device], machine[new_device[node]])
            steps.append(
                _Step(int(EventKind.TRANSFER), node, device, new_device[node], duration, size)
            )
            copied.add((node, device))

        for row in rows.tolist():  # the run's own order
            node = int(ev["node"][row])
            if ev["kind"][row] == int(EventKind.TRANSFER):
                device = where[ev["device"][row]]
                if (node, device) in needed and (node, device) not in copied:
                    copy(node, device)
                continue
            device = new_device[node]
            for source in sources(node):
                if (source, device) in needed and (source, device) not in copied:
                    copy(source, device)
            if device == where[old_device[node]]:
                duration = int(ev["t1"][row] - ev["t0"][row])
            else:
                duration = round(model.op_seconds(ops[node], machine[device]) * 1e9)
            steps.append(
                _Step(int(EventKind.OP), node, device, -1, duration, int(ev["bytes"][row]))
            )
        columns = _lay_out(steps, ops, new_device, int(run["t0"]), int(run["id"]))
        records = _device_records(trace.devices, machine)
        nodes = [_node_record(n, new_device, moved, machine) for n in trace.nodes]
        edges = [placed_edge_record(e, new_device) for e in trace.edges]
        end = int(columns["t1"].max()) if len(columns["t1"]) else int(run["t0"])
        runs = [{**run, "t1": end, "status": "ok", "error": None}]
        question = _question(moves or {}, gpus)
        return Trace(records, nodes, edges, runs, columns, prediction=question)

    def _devices(self, gpus: int | None) -> Sequence[Device]:
        """The session's devices, or with ``gpus`` GPUs: fewer drop the last, more copy the
        last GPU (its card and profile) under the next indices."""
        if gpus is None:
            return self.devices
        if gpus < 0:
            raise ValueError(f"what_if(devices=...): 0 GPUs or more, not {gpus}")
        others = [d for d in self.devices if d.device_type != "GPU"]
        current = [d for d in self.devices if d.device_type == "GPU"]
        if gpus > 0 and not current:
            raise ValueError("what_if(devices=...) needs a session with a GPU to copy")
        kept = current[:gpus]
        while len(kept) < gpus:
            last = current[-1]
            kept.append(last.with_spec(last.spec.replace(device_index=len(kept))))
        return [*others, *kept]

    def _relocated(self, device_id: int, devices: Sequence[Device]) -> int:
        """The device an op that ran on session device ``device_id`` has in ``devices``: the
        same name, else (a GPU no longer there) GPU:0 or CPU:0, as soft placement would."""
        name = self.devices[device_id].name
        for i, d in enumerate(devices):
            if d.name == name:
                return i
        gpus = [i for i, d in enumerate(devices) if d.device_type == "GPU"]
        cpus = [i for i, d in enumerate(devices) if d.device_type == "CPU"]
        return (gpus or cpus)[0]

    def _apply(
        self,
        moves: Mapping[str, str],
        ops: Mapping[int, Operation],
        devices: Sequence[Device],
        new_device: dict[int, int],
    ) -> set[int]:
        by_name = {op.name: op for op in ops.values()}
        groups = ColocationIndex()
        groups.add(sorted(ops.values(), key=lambda op: op.id))
        moved = set()
        moved_by: dict[int, Operation] = {}  # member id -> the moved op that took its group
        for name, where in moves.items():
            op = by_name.get(getattr(name, "name", name))
            if op is None:
                raise KeyError(f"what_if: no op named {name!r} in the graph")
            spec = DeviceSpec.from_string(where)
            matching = [i for i, d in enumerate(devices) if spec.matches(d.spec)]
            if not matching:
                names = ", ".join(short_name(d.name) for d in devices)
                raise ValueError(
                    f"what_if: no device matches {where!r} for '{op.name}' (created at "
                    f"{op.source}); the devices: {names}"
                )
            target = matching[0]
            device = devices[target]
            for member in groups.group(op):  # colocation holds in a prediction too
                if not member.op_def.supports(device.device_type, member.dtype):
                    with_it = "" if member is op else f", colocated with '{op.name}',"
                    raise ValueError(
                        f"what_if: '{member.name}' ({member.type}, created at "
                        f"{member.source}){with_it} has no {device.device_type} kernel, so it "
                        f"cannot move to {short_name(device.name)}"
                    )
                if member.id in moved_by and new_device[member.id] != target:
                    raise ValueError(
                        f"what_if: '{op.name}' (created at {op.source}) is colocated with "
                        f"'{member.name}', which '{moved_by[member.id].name}' takes to "
                        f"{short_name(devices[new_device[member.id]].name)}: a colocation "
                        f"group runs on one device, not also on {short_name(device.name)}"
                    )
                if member.id in new_device:
                    new_device[member.id] = target
                    moved.add(member.id)
                moved_by[member.id] = op
        return moved


@dataclass(frozen=True)
class _Step:
    kind: int
    node: int
    device: int
    peer: int  # a transfer's source device
    duration: int  # ns
    bytes: int


def _last_run(trace: Trace) -> dict[str, Any]:
    if not trace.runs:
        raise ValueError("what_if needs a trace with a run")
    run = trace.runs[-1]
    if run.get("status") != "ok":
        raise ValueError(
            f"what_if predicts a run that finished, and the trace's last run failed: "
            f"{run.get('error')}"
        )
    return run


def _copy_ns(size: int, dst: Device, src: Device) -> int:
    """As the simulation times a copy between these two devices."""
    bandwidth = link_bandwidth(dst, src)
    return round(copy_seconds(size, bandwidth) * 1e9) if bandwidth is not None else 0


def _lay_out(
    steps: Sequence[_Step],
    ops: Mapping[int, Operation],
    device_of: Mapping[int, int],
    origin: int,
    run_id: int,
) -> dict[str, np.ndarray]:
    """Each step starts when its lane is free and its inputs are on its device (a control
    input: when it finished); times in ns from ``origin``, one run event first."""
    made: dict[tuple[int, int], int] = {}  # (node, device) -> the latest step that put it there
    deps: list[list[int]] = []
    for i, step in enumerate(steps):
        if step.kind == int(EventKind.TRANSFER):
            needs = [(step.node, step.peer)]
        else:
            op = ops[step.node]
            needs = [(t.op.id, step.device) for t in op.inputs]
            needs.extend((c.id, device_of[c.id]) for c in op.control_inputs if c.id in device_of)
        deps.append([made[k] for k in needs if k in made])
        made[(step.node, step.device)] = i
    lanes = [(step.device, step.kind == int(EventKind.TRANSFER)) for step in steps]
    starts, ends = lay_out_steps(lanes, deps, [step.duration for step in steps])
    n = len(steps) + 1
    out = {c.name: np.full(n, c.default or 0, dtype=c.dtype) for c in EVENT_COLUMNS}
    out["kind"][1:] = [step.kind for step in steps]
    out["t0"][1:] = np.add(starts, origin, dtype=np.int64)
    out["t1"][1:] = np.add(ends, origin, dtype=np.int64)
    out["node"][1:] = [step.node for step in steps]
    out["device"][1:] = [step.device for step in steps]
    out["peer"][1:] = [step.peer for step in steps]
    out["bytes"][1:] = [step.bytes for step in steps]
    out["kind"][0], out["t0"][0] = int(EventKind.RUN), origin
    out["t1"][0] = int(out["t1"][1:].max()) if n > 1 else origin
    out["node"][0] = out["device"][0] = out["peer"][0] = -1
    out["source"][:] = int(TimingSource.MODELED)
    out["run"][:] = run_id
    return {name: out[name] for name in COLUMN_NAMES}


def _device_records(
    recorded: Sequence[Mapping[str, Any]], devices: Sequence[Device]
) -> list[dict[str, Any]]:
    """The trace's device records for the devices kept, and copies of the last GPU's for the
    GPUs added; ids are positions in ``devices``."""
    by_name = {r["name"]: r for r in recorded}
    template = next((r for r in reversed(recorded) if r["type"] == "GPU"), None)
    result = []
    for i, device in enumerate(devices):
        record = by_name.get(device.name)
        if record is None:
            assert template is not None
            record = {**template, "name": device.name, "index": device.index, "reserved": 0}
        result.append({**record, "id": i})
    return result


def _node_record(
    node: Mapping[str, Any],
    new_device: Mapping[int, int],
    moved: set[int],
    devices: Sequence[Device],
) -> dict[str, Any]:
    device = new_device.get(node["id"])
    if device is None:
        return dict(node)
    if node["id"] not in moved:
        return placed_node_record(node, device)
    text = f"moved to {short_name(devices[device].name)} by what_if (a prediction)"
    return placed_node_record(node, device, reason_record(str(ReasonKind.MOVED), text))


def _gpu_count(devices: int | Mapping[str, int] | None) -> int | None:
    """``devices`` as a number of GPUs: an int, or ``device_count``'s form, ``{"GPU": 4}``."""
    if devices is None or isinstance(devices, int):
        return devices
    unknown = set(devices) - {"GPU", "CPU"}
    if unknown or devices.get("CPU", 1) != 1:
        raise ValueError(
            f"what_if(devices=...) takes a number of GPUs, or {{'GPU': n}} (one CPU), not "
            f"{dict(devices)!r}"
        )
    return devices.get("GPU")


def _question(moves: Mapping[str, str], gpus: int | None) -> str:
    """ "what if w1 on /gpu:1"; many ops to one device are named by the scope they share
    ("what if 412 ops of layer_1/ on /gpu:1"), so the question stays a line."""
    by_place: dict[str, list[str]] = {}
    for name, where in moves.items():
        by_place.setdefault(where, []).append(getattr(name, "name", name))
    parts = []
    for where, names in by_place.items():
        if len(names) <= _NAMED_MOVES:
            parts.extend(f"{name} on {where}" for name in names)
            continue
        scope = posixpath.commonpath([posixpath.dirname(name) for name in names])
        under = f" of {scope}/" if scope else ""
        parts.append(f"{len(names)} ops{under} on {where}")
    if gpus is not None:
        parts.append(f"{gpus} GPU(s)")
    return "what if " + (", ".join(parts) if parts else "nothing changed")
