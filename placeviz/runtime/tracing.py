"""Turn a compiled plan's per-step timestamps into recorded events, and events into a Trace.

Everything that does not change between runs of a plan (which op each step runs, on which device,
what it allocates and when that is freed) is computed once per plan; a run then adds its events
with one ``extend`` per column.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from placeviz.devices.context import Device
from placeviz.events.kinds import EventKind, TimingSource
from placeviz.events.recorder import Recorder
from placeviz.graph.core import Tensor
from placeviz.runtime.executor import CompiledPlan
from placeviz.runtime.simulation import TimelineModel

_CLOCK = int(TimingSource.CLOCK)
_MODELED = int(TimingSource.MODELED)


class PlanColumns:
    """The run-invariant columns of one compiled plan's events."""

    def __init__(self, compiled: CompiledPlan, device_ids: dict[str, int]) -> None:
        steps = compiled.steps
        self.count = len(steps)
        self.kinds = [int(s.kind) for s in steps]
        self.nodes = [
            (s.tensor.op._id if s.tensor is not None else s.op._id)
            if s.kind is EventKind.TRANSFER
            else s.op._id
            for s in steps
        ]
        self.devices = [device_ids[s.device.name] for s in steps]
        self.peers = [device_ids[s.peer.name] if s.peer is not None else -1 for s in steps]
        self.virtual = np.array([not s.moves_data for s in steps], dtype=bool)
        self.has_virtual = bool(self.virtual.any())
        self.clock_sources = [_CLOCK] * self.count
        # Where each step's bytes come from: (step, output index or -1 for all its outputs),
        # and the bytes known from static shapes, used when the run is not fully traced.
        producer: dict[int, int] = {}
        self.byte_sources: list[tuple[int, int]] = []
        self.static_bytes: list[int] = []
        for i, step in enumerate(steps):
            if step.kind is EventKind.TRANSFER and step.tensor is not None:
                self.byte_sources.append(
                    (producer.get(id(step.tensor), -1), step.tensor.value_index)
                )
                self.static_bytes.append(_static_bytes([step.tensor]))
            else:
                for tensor in step.op.outputs:
                    producer[id(tensor)] = i
                self.byte_sources.append((i, -1))
                refs = step.op.op_def.ref_output
                self.static_bytes.append(0 if refs else _static_bytes(step.op.outputs))
        self.model = TimelineModel(steps)
        self.modeled = self.model.any_modeled
        self.memory = _memory_plan(compiled, device_ids) if compiled.full_trace else []


def _memory_plan(compiled: CompiledPlan, device_ids: dict[str, int]) -> list[tuple[int, ...]]:
    """(alloc step, free step or -1 for run end, device id, node, bytes source step, output index).

    A tensor is held on a device from the step that produced or received it until the last step
    that used it there; fetched tensors until the run ends. Variables are not per-run memory.
    """
    steps = compiled.steps
    holders: dict[tuple[int, str], list[int]] = {}  # (tensor, device) -> [alloc step, last use]
    made: dict[tuple[int, str], tuple[Tensor, int, int]] = {}  # -> (tensor, bytes step, index)
    producer_step: dict[int, int] = {}
    for i, step in enumerate(steps):
        if step.kind is EventKind.OP:
            for tensor in step.op.inputs:
                key = (id(tensor), step.device.name)
                if key in holders:
                    holders[key][1] = i
            if step.op.op_def.ref_output:
                continue
            for k, tensor in enumerate(step.op.outputs):
                key = (id(tensor), step.device.name)
                holders[key] = [i, i]
                made[key] = (tensor, i, k)
                producer_step[id(tensor)] = i
        elif step.tensor is not None and step.peer is not None:
            source = (id(step.tensor), step.peer.name)
            if source in holders:
                holders[source][1] = i
            if id(step.tensor) in producer_step:
                key = (id(step.tensor), step.device.name)
                holders[key] = [i, i]
                made[key] = (step.tensor, producer_step[id(step.tensor)], step.tensor.value_index)
    fetched = {id(f) for f in compiled.plan.fetches if isinstance(f, Tensor)}
    plan = []
    for key, (alloc, last) in holders.items():
        tensor, bytes_step, index = made[key]
        free = -1 if key[0] in fetched else last
        plan.append((alloc, free, device_ids[key[1]], tensor.op._id, bytes_step, index))
    return plan


def _static_bytes(tensors: Sequence[Tensor]) -> int:
    total = 0
    for tensor in tensors:
        count = tensor.shape.num_elements()
        total += 0 if count is None else count * tensor.dtype.size
    return total


def _measured_bytes(
    out_bytes: Sequence[tuple[int, ...]], source: int, index: int, count: int
) -> int:
    if source < 0 or source >= count:
        return 0
    sizes = out_bytes[source]
    if index < 0:
        return sum(sizes)
    return sizes[index] if index < len(sizes) else 0


def _sequential_times(
    compiled: CompiledPlan,
    columns: PlanColumns,
    t_start: int,
    t_end: int,
    count: int,
    failed_step: int | None,
) -> tuple[list[int], list[int]]:
    """One stream: each step starts when the previous one ended."""
    if columns.has_virtual or failed_step is not None:
        ends_array = np.asarray(compiled.ends[:count], dtype=np.int64)
        if failed_step is not None:
            ends_array[-1] = t_end
        # steps that run no code end when the previous step did
        ends_array[columns.virtual[:count]] = t_start
        ends = np.maximum.accumulate(np.maximum(ends_array, t_start)).tolist()
    else:
        ends = compiled.ends[:count]
    return [t_start, *ends[:-1]], ends


def _parallel_times(
    compiled: CompiledPlan, columns: PlanColumns, t_start: int, t_end: int
) -> tuple[list[int], list[int], list[int]]:
    """Streams stamp each step's start and end; a step that started but did not end failed
    (or was cancelled) at the end of the run; steps that run no code take no time."""
    starts, ends = list(compiled.starts or ()), list(compiled.ends)
    ran = []
    for i, step in enumerate(compiled.steps):
        if columns.virtual[i]:
            deps = [ends[d] for d in step.deps if ends[d]]
            if len(deps) == len(step.deps):
                starts[i] = ends[i] = max(deps, default=t_start)
                ran.append(i)
        elif starts[i]:
            ends[i] = ends[i] or t_end
            ran.append(i)
    return ran, starts, ends


def record_run(
    recorder: Recorder,
    compiled: CompiledPlan,
    columns: PlanColumns,
    run_id: int,
    t_start: int,
    t_end: int,
    failed_step: int | None,
) -> None:
    """Add one run's events: the run, its steps and, when fully traced, its allocations."""
    if compiled.starts is not None:
        ran, starts, ends = _parallel_times(compiled, columns, t_start, t_end)
    else:
        count = columns.count if failed_step is None else failed_step + 1
        ran = range(count)
        starts, ends = _sequential_times(compiled, columns, t_start, t_end, count, failed_step)
    count = len(ran)
    if count == 0:
        recorder.append(int(EventKind.RUN), t_start, t_end, run=run_id, source=_CLOCK)
        return
    if columns.modeled:
        measured = [end - start for start, end in zip(starts, ends)]
        model_starts, model_ends, model_sources = columns.model.lay_out(measured, len(starts))
        t0 = [t_start + model_starts[i] for i in ran]
        t1 = [t_start + model_ends[i] for i in ran]
        sources = [model_sources[i] for i in ran]
        # The run lasts as long as its modeled timeline, on which its steps are laid out.
        recorder.append(int(EventKind.RUN), t_start, max(t1), run=run_id, source=_MODELED)
    else:
        t0, t1 = [starts[i] for i in ran], [ends[i] for i in ran]
        sources = columns.clock_sources[:count]
        recorder.append(int(EventKind.RUN), t_start, t_end, run=run_id, source=_CLOCK)
    picked = list(ran)
    out_bytes = compiled.out_bytes if compiled.full_trace else None
    if out_bytes is not None:
        step_bytes = [
            _measured_bytes(out_bytes, *columns.byte_sources[i], len(starts)) for i in picked
        ]
    else:
        step_bytes = [columns.static_bytes[i] for i in picked]
    recorder.extend(
        {
            "kind": [columns.kinds[i] for i in picked],
            "t0": t0,
            "t1": t1,
            "node": [columns.nodes[i] for i in picked],
            "device": [columns.devices[i] for i in picked],
            "stream": [columns.devices[i] for i in picked],
            "bytes": step_bytes,
            "source": sources,
            "run": itertools.repeat(run_id, count),
            "peer": [columns.peers[i] for i in picked],
        }
    )
    if out_bytes is not None:
        full_t0 = dict(zip(picked, t0))
        full_t1 = dict(zip(picked, t1))
        _record_memory(recorder, columns, out_bytes, full_t0, full_t1, t_end, run_id)


def _record_memory(
    recorder: Recorder,
    columns: PlanColumns,
    out_bytes: Sequence[tuple[int, ...]],
    t0: dict[int, int],
    t1: dict[int, int],
    t_end: int,
    run_id: int,
) -> None:
    """An output is allocated when its step starts and freed when its last user there ends."""
    events = []
    for alloc, free, device, node, bytes_step, index in columns.memory:
        if alloc not in t0 or bytes_step not in t1 or index >= len(out_bytes[bytes_step]):
            continue
        size = out_bytes[bytes_step][index]
        events.append((t0[alloc], int(EventKind.ALLOC), device, node, size))
        end = t1.get(free, t_end) if free >= 0 else t_end
        events.append((end, int(EventKind.FREE), device, node, size))
    events.sort(key=lambda e: (e[0], e[1] == int(EventKind.ALLOC)))
    recorder.extend(
        {
            "kind": [e[1] for e in events],
            "t0": [e[0] for e in events],
            "t1": [e[0] for e in events],
            "node": [e[3] for e in events],
            "device": [e[2] for e in events],
            "stream": [e[2] for e in events],
            "bytes": [e[4] for e in events],
            "source": itertools.repeat(int(TimingSource.NONE), len(events)),
            "run": itertools.repeat(run_id, len(events)),
            "peer": itertools.repeat(-1, len(events)),
        }
    )


def device_record(device: Device, index: int) -> dict[str, Any]:
    physical = device.physical
    return {
        "id": index,
        "name": device.name,
        "type": device.device_type,
        "index": device.index,
        "parent": physical.name,
        "kind": device.kind,
        "profile": physical.profile.name if physical.profile else None,
        "description": physical.description,
        "memory_limit": device.memory_limit,
    }
