"""Modeled time on simulated GPUs: a roofline per op and link bandwidth per transfer, laid out by
a discrete-event simulation over the run's dependencies.

Values are still computed for real (with NumPy); only their timing is modeled. A step on a
simulated GPU (or a transfer that touches one) takes ``max(FLOPs / peak, bytes / bandwidth)`` plus
a launch latency; every other step keeps its measured clock duration. Each device runs one op at
a time (its stream) and copies into a device use that device's copy engine, so two towers on two
GPUs overlap while one GPU serializes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from placeviz import dtypes
from placeviz.devices.context import Device
from placeviz.devices.profiles import GPUProfile
from placeviz.events.kinds import EventKind, TimingSource
from placeviz.graph.core import Tensor, tensor_bytes
from placeviz.runtime.executor import Step

_TRANSFER_LATENCY_NS = 10_000  # PCIe round trip plus driver work for one copy


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


def _static_shapes(tensors: Sequence[Tensor]) -> list[tuple[int, ...]] | None:
    shapes = []
    for tensor in tensors:
        if not tensor.shape.is_fully_defined:
            return None
        shapes.append(tuple(tensor.shape.dims or ()))  # type: ignore[arg-type]
    return shapes


def _peak_flops(profile: GPUProfile, dtype: dtypes.DType | None) -> float:
    if dtype is dtypes.float16:
        return profile.fp16_flops
    if dtype is dtypes.float64:
        return profile.fp32_flops / 2
    return profile.fp32_flops


def _simulated(device: Device | None) -> bool:
    return device is not None and device.simulated and device.physical.profile is not None


def modeled_duration(step: Step, transfer_bytes: int | None) -> int | None:
    """Nanoseconds the step takes on its simulated device, or None where it is not modeled."""
    if step.kind is EventKind.OP:
        if not _simulated(step.device):
            return None
        profile = step.device.physical.profile
        assert profile is not None
        ins = _static_shapes(step.op.inputs)
        outs = _static_shapes(step.op.outputs)
        if ins is None or outs is None:
            return None
        cost = step.op.op_def.cost(step.op, ins, outs)
        seconds = max(
            cost.flops / _peak_flops(profile, step.op.dtype), cost.bytes / profile.memory_bandwidth
        )
        return _ns(seconds + profile.launch_latency_s)
    if not (_simulated(step.device) or _simulated(step.peer)):
        return None
    size = transfer_bytes or 0
    return _TRANSFER_LATENCY_NS + _ns(size / _link_bandwidth(step.device, step.peer))


def _link_bandwidth(dst: Device, src: Device | None) -> float:
    profiles = [d.physical.profile for d in (dst, src) if d is not None and _simulated(d)]
    same_card = src is not None and src.physical == dst.physical
    if same_card and profiles:
        return profiles[0].memory_bandwidth / 2  # read and write the card's own memory
    return min(p.host_link_bandwidth for p in profiles)


class TimelineModel:
    """Per plan: the modeled duration of every step (None: use the measured one)."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = steps
        self.durations: list[int | None] = []
        for step in steps:
            size = None
            if step.tensor is not None:
                size = tensor_bytes(step.tensor)
            self.durations.append(modeled_duration(step, size))
        self.lanes = [
            (step.device.name, "copy" if step.kind is EventKind.TRANSFER else "compute")
            for step in steps
        ]

    @property
    def any_modeled(self) -> bool:
        return any(d is not None for d in self.durations)

    def lay_out(
        self, measured: Sequence[int], count: int
    ) -> tuple[list[int], list[int], list[int]]:
        """Start, end (ns from the run's start) and timing source of the first ``count`` steps."""
        starts, ends, sources = [0] * count, [0] * count, [0] * count
        lane_free: dict[tuple[str, str], int] = {}
        for i in range(count):
            step = self.steps[i]
            ready = max((ends[d] for d in step.deps if d < i), default=0)
            start = max(ready, lane_free.get(self.lanes[i], 0))
            modeled = self.durations[i]
            if modeled is not None:
                duration, source = modeled, TimingSource.MODELED
            else:
                duration, source = measured[i], TimingSource.CLOCK
            starts[i], ends[i], sources[i] = start, start + duration, int(source)
            lane_free[self.lanes[i]] = start + duration
        return starts, ends, sources
