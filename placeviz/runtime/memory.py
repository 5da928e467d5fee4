"""Device memory a plan needs, from static shapes, checked against each device's limit.

A tensor occupies its device from the op that makes it (or the transfer that brings it) until
its last consumer there has run; fetched tensors stay until the run ends; variables stay for the
session. The plan is checked before it runs, so an op that would not fit fails with nothing
computed. Tensors whose shapes are not fully known at graph construction are not counted (the
runtime issue accounts every allocation as it happens).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from placeviz.devices.context import Device
from placeviz.errors import ResourceExhaustedError
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.shapes import format_dims
from placeviz.runtime.plan import Plan


class Resident(NamedTuple):
    """Memory held on a device between runs (a variable's value)."""

    device: Device
    bytes: int
    op: Operation


def tensor_bytes(tensor: Tensor) -> int | None:
    count = tensor.shape.num_elements()
    return None if count is None else count * tensor.dtype.size


def peak_memory(plan: Plan, resident: Iterable[Resident]) -> dict[str, int]:
    """Peak bytes per device name; raises ResourceExhaustedError at the first op that overflows."""
    devices: dict[str, Device] = {}
    used: dict[str, int] = {}
    live: dict[str, dict[tuple[int, str], tuple[int, Tensor]]] = {}
    for item in resident:
        devices[item.device.name] = item.device
        used[item.device.name] = used.get(item.device.name, 0) + item.bytes
    peak = dict(used)
    last_use = _last_uses(plan)
    for index, op in enumerate(plan.ops):
        device = plan.devices[op._id]
        devices[device.name] = device
        arriving = [t for t in op.inputs if plan.devices[t.op._id].name != device.name]
        produced = [] if op.op_def.ref_output else list(op.outputs)
        for tensor in (*arriving, *produced):
            key = (id(tensor), device.name)
            size = tensor_bytes(tensor)
            on_device = live.setdefault(device.name, {})
            if size is None or key in on_device:
                continue
            now = used.get(device.name, 0) + size
            if now > device.memory_limit:
                raise _out_of_memory(op, tensor, size, device, used.get(device.name, 0), on_device)
            on_device[key] = (size, tensor)
            used[device.name] = now
            peak[device.name] = max(peak.get(device.name, 0), now)
        for key in [k for k in live.get(device.name, {}) if last_use.get(k) == index]:
            size, _ = live[device.name].pop(key)
            used[device.name] -= size
        for tensor in op.inputs:
            source = plan.devices[tensor.op._id].name
            key = (id(tensor), source)
            if source != device.name and last_use.get(key) == index and key in live.get(source, {}):
                used[source] -= live[source].pop(key)[0]
    return peak


def _last_uses(plan: Plan) -> dict[tuple[int, str], int]:
    """(tensor, device) -> index of the last op that reads it there or, by a transfer, from it."""
    last: dict[tuple[int, str], int] = {}
    for index, op in enumerate(plan.ops):
        device = plan.devices[op._id].name
        for tensor in op.inputs:
            last[(id(tensor), device)] = index
            last[(id(tensor), plan.devices[tensor.op._id].name)] = index
    end = len(plan.ops)
    for fetch in plan.fetches:
        if isinstance(fetch, Tensor):
            last[(id(fetch), plan.devices[fetch.op._id].name)] = end
    return last


def _out_of_memory(
    op: Operation,
    tensor: Tensor,
    size: int,
    device: Device,
    in_use: int,
    live: dict[tuple[int, str], tuple[int, Tensor]],
) -> ResourceExhaustedError:
    largest = sorted(live.values(), key=lambda item: -item[0])[:5]
    held = "; ".join(f"{t.name} from '{t.op.name}' ({t.op.type}): {n} bytes" for n, t in largest)
    what = "receiving" if tensor.op is not op else "allocating"
    return ResourceExhaustedError(
        f"OOM when {what} tensor {tensor.name} with shape {format_dims(tensor.shape.dims or ())} "
        f"and type {tensor.dtype.name} ({size} bytes) for '{op.name}' ({op.type}, created at "
        f"{op.source}) on {device.name}: {in_use} bytes already in use, "
        f"limit {device.memory_limit} bytes ({device.memory_limit / (1 << 20):.0f} MiB). "
        "Largest live tensors: "
        f"{held or 'none'}",
        op=op,
    )
