"""Modeled time on simulated GPUs: a roofline per op and link bandwidth per transfer, laid out by
a discrete-event simulation over the run's dependencies.

Values are still computed for real (with NumPy); only their timing is modeled. A step on a
simulated GPU (or a transfer that touches one) takes ``max(FLOPs / peak, bytes / bandwidth)`` plus
a launch latency (an op that launches no kernel: only the executor's dispatch), with the shapes of
the run when static shapes do not give them; every other step keeps its measured clock duration.
Each device runs one op at a time (its stream) and copies into a device use that device's copy
engine, so two towers on two GPUs overlap while one GPU serializes them.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from placeviz import dtypes
from placeviz.contract import EventKind, TimingSource
from placeviz.devices.context import Device
from placeviz.devices.profiles import HOST_PROFILE, GPUProfile, HostProfile
from placeviz.graph.core import Operation, Tensor, tensor_bytes
from placeviz.graph.registry import free_cost

if TYPE_CHECKING:  # the executor builds its loops' timings from this module
    from placeviz.runtime.dry_run import DryPlan
    from placeviz.runtime.plan_codegen import Step

_TRANSFER_LATENCY_NS = 10_000  # PCIe round trip plus driver work for one copy
# An op that launches no kernel (registry.free_cost) costs the executor's dispatch only, about a
# microsecond in TensorFlow's, rather than a launch latency.
_HOST_DISPATCH_NS = 1_000
_CACHED_SIZES = 8  # sets of run-time sizes whose modeled durations a plan keeps
_MODELED, _CLOCK = int(TimingSource.MODELED), int(TimingSource.CLOCK)


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


Shape = tuple[int, ...]


def _static_shape(tensor: Tensor) -> Shape | None:
    if not tensor.shape.is_fully_defined:
        return None
    return tuple(tensor.shape.dims or ())  # type: ignore[arg-type]


def _nbytes(tensor: Tensor, shape: Shape) -> int:
    return math.prod(shape) * tensor.dtype.size


def _shape_of_size(tensor: Tensor, nbytes: int) -> Shape:
    """The shape a tensor of ``nbytes`` has, given what its static shape knows.

    Exact when one dimension is unknown (a batch); otherwise the unknown elements go to the first
    unknown dimension, which keeps the element count (all a memory-bound op's cost depends on).
    """
    elements = nbytes // max(tensor.dtype.size, 1)
    dims = tensor.shape.dims
    if dims is None:
        return (elements,)
    known = 1
    for d in dims:
        known *= d if d is not None else 1
    first = next(i for i, d in enumerate(dims) if d is None)
    return tuple(
        (elements // known if known else 0) if i == first else (1 if d is None else d)
        for i, d in enumerate(dims)
    )


def _peak_flops(profile: GPUProfile | HostProfile, dtype: dtypes.DType | None) -> float:
    if dtype is dtypes.float16:
        return profile.fp16_flops
    if dtype is dtypes.float64:
        return profile.fp32_flops / 2
    return profile.fp32_flops


def _simulated(device: Device | None) -> bool:
    return device is not None and device.simulated and device.physical.profile is not None


def roofline_seconds(
    op: Operation, profile: GPUProfile | HostProfile, ins: Sequence[Shape], outs: Sequence[Shape]
) -> float:
    """The slower of compute at peak and memory traffic at full bandwidth, plus the launch."""
    if op.op_def.cost is free_cost:
        return _HOST_DISPATCH_NS / 1e9
    cost = op.op_def.cost(op, ins, outs)
    seconds = max(
        cost.flops / _peak_flops(profile, op.dtype), cost.bytes / profile.memory_bandwidth
    )
    return seconds + profile.launch_latency_s


def _op_duration(step: Step, ins: Sequence[Shape], outs: Sequence[Shape]) -> int:
    """A step that runs no code (a constant, an op folded into one) costs a constant's."""
    if not step.runs_code:
        return _HOST_DISPATCH_NS
    profile = step.device.physical.profile
    assert profile is not None
    return _ns(roofline_seconds(step.op, profile, ins, outs))


def op_timing(
    op: Operation, device: Device, dry: bool = False
) -> Callable[[Sequence[Any], Any], int] | None:
    """For an op in a while loop on a simulated GPU: its modeled duration (ns) from the values
    an execution read and made (their shapes, once per set of shapes); None on other devices,
    whose executions keep their measured time, except in a ``dry`` run, which times the host's
    by ``HOST_PROFILE`` (as ``_dry_duration``)."""
    if not (dry or _simulated(device)):
        return None
    profile = device.physical.profile or HOST_PROFILE
    ins = [_static_shape(t) for t in op.inputs]
    outs = [_static_shape(t) for t in op.outputs]
    if op.op_def.cost is free_cost or (None not in ins and None not in outs):
        fixed = _ns(roofline_seconds(op, profile, ins, outs))  # type: ignore[arg-type]
        return lambda inputs, result: fixed
    cache: dict[tuple[Any, ...], int] = {}

    def duration(inputs: Sequence[Any], result: Any) -> int:
        outputs = result if op.op_def.multi_output else (result,) if op.outputs else ()
        ins = tuple(np.shape(v) if hasattr(v, "shape") else () for v in inputs)
        outs = tuple(np.shape(v) if hasattr(v, "shape") else () for v in outputs)
        key = (ins, outs)
        found = cache.get(key)
        if found is None:
            try:
                found = _ns(roofline_seconds(op, profile, ins, outs))
            except (ValueError, IndexError, TypeError):  # a cost rule that cannot read these
                moved = sum(getattr(v, "nbytes", 0) for v in (*inputs, *outputs))
                found = _ns(memory_bound_seconds(moved, profile))
            cache[key] = found
        return found

    return duration


def memory_bound_seconds(size: int, profile: GPUProfile | HostProfile) -> float:
    """An op timed by the data it moves: what is left when its cost rule cannot read shapes."""
    return size / profile.memory_bandwidth + profile.launch_latency_s


def _memory_bound_duration(step: Step, size: int) -> int:
    profile = step.device.physical.profile
    assert profile is not None
    return _ns(memory_bound_seconds(size, profile))


def copy_seconds(size: int, bandwidth: float) -> float:
    """One copy of ``size`` bytes over a link: its latency, then the bytes."""
    return _TRANSFER_LATENCY_NS / 1e9 + size / bandwidth


def transfer_ns(size: int, dst: Device, src: Device | None) -> int:
    """A modeled copy's duration: ``size`` bytes into ``dst`` from ``src`` (one touches a
    simulated GPU), the plan's transfers and those inside a while loop alike."""
    bandwidth = link_bandwidth(dst, src)
    assert bandwidth is not None  # a modeled copy touches a simulated GPU
    return _TRANSFER_LATENCY_NS + _ns(size / bandwidth)


def transfer_timing(dst: Device, src: Device, dry: bool = False) -> Callable[[int], int] | None:
    """For a value of a while loop that crosses devices: its copy's modeled duration (ns) from
    its bytes where it touches a simulated GPU; None elsewhere, where it is measured, except in
    a ``dry`` run, where a copy between devices sharing memory takes none (``_dry_duration``)."""
    if not (_simulated(dst) or _simulated(src)):
        if not dry:
            return None
        if link_bandwidth(dst, src) is None:
            return _no_time
    return functools.partial(transfer_ns, dst=dst, src=src)


def _no_time(size: int) -> int:
    return 0


def _tensors_of(step: Step) -> list[Tensor]:
    if step.kind is EventKind.TRANSFER:
        return [step.tensor] if step.tensor is not None else []
    return [*step.op.inputs, *step.op.outputs]


def _modeled(step: Step) -> bool:
    if step.kind is EventKind.FRAME:  # a while loop: modeled when some op of it is
        return step.frame is not None and step.frame.modeled
    if step.kind is EventKind.OP:
        return _simulated(step.device)
    return _simulated(step.device) or _simulated(step.peer)


def link_bandwidth(dst: Device, src: Device | None) -> float | None:
    """Bytes/s of a copy between two devices, from their GPUs' profiles (None: no GPU): within
    one card its memory's, between two cards their peer link's (NVLink or PCIe), between a card
    and the host its PCIe link's."""
    profiles = [d.physical.profile for d in (dst, src) if d is not None and d.physical.profile]
    if not profiles:
        return None
    if src is not None and src.physical == dst.physical:
        return profiles[0].memory_bandwidth / 2  # read and write the card's own memory
    if len(profiles) == 2:
        return min(p.peer_link_bandwidth for p in profiles)
    return min(p.host_link_bandwidth for p in profiles)


def _dry_duration(step: Step, dry: DryPlan) -> int:
    """A dry run's step: on a GPU (or a copy touching one) as a real run on a simulated GPU
    models it, by the card's profile; on the host by the host's. A step that runs no code takes
    no time on the host (a constant, a copy between devices that share its memory) and a
    constant's dispatch on a GPU."""
    if step.kind is EventKind.TRANSFER:
        assert step.tensor is not None
        bandwidth = link_bandwidth(step.device, step.peer)
        if bandwidth is None:
            return 0
        return transfer_ns(_nbytes(step.tensor, dry.shape(step.tensor)), step.device, step.peer)
    profile = step.device.physical.profile
    if not step.runs_code:  # a constant, or an op folded into one
        return 0 if profile is None else _HOST_DISPATCH_NS
    ins = [dry.shape(t) for t in step.op.inputs]
    outs = [dry.shape(t) for t in step.op.outputs]
    return _ns(roofline_seconds(step.op, profile or HOST_PROFILE, ins, outs))


class _RunTimeSizes:
    """Where a run's sizes of the tensors without a static shape are: a fed value, or the bytes
    the plan measured for the step that made or moved the tensor (a slot of ``out_bytes``)."""

    def __init__(
        self,
        tensors: Sequence[Tensor],
        steps: Sequence[Step],
        feeds: Sequence[Tensor],
        offsets: Sequence[int],
    ) -> None:
        feed_index = {id(t): i for i, t in enumerate(feeds)}
        slot: dict[int, int] = {}
        for i, step in enumerate(steps):
            if offsets[i] < 0:
                continue
            if step.kind is EventKind.TRANSFER and step.tensor is not None:
                slot.setdefault(id(step.tensor), offsets[i])
            else:
                for k, tensor in enumerate(step.op.outputs):
                    slot.setdefault(id(tensor), offsets[i] + k)
        self.fed = [(t, feed_index[id(t)]) for t in tensors if id(t) in feed_index]
        self.measured = [(t, slot.get(id(t))) for t in tensors if id(t) not in feed_index]
        slots = [s for _, s in self.measured if s is not None]
        self._read = operator.itemgetter(*slots) if slots else None

    def key(self, out_bytes: Sequence[int], feeds: Sequence[Any]) -> tuple[Any, ...]:
        """What a run's sizes are determined by: the same key, the same shapes."""
        measured = self._read(out_bytes) if self._read is not None else ()
        return (measured, *(feeds[i].shape for _, i in self.fed))

    def shapes(self, out_bytes: Sequence[int], feeds: Sequence[Any]) -> dict[int, Shape]:
        """By tensor id: the shape each of these tensors had in the run."""
        shapes = {id(t): tuple(feeds[i].shape) for t, i in self.fed}
        for tensor, slot in self.measured:
            shapes[id(tensor)] = _shape_of_size(tensor, out_bytes[slot] if slot is not None else 0)
        return shapes


class TimelineModel:
    """Per plan: the modeled duration of every step on (or to and from) a simulated GPU.

    Durations that static shapes give are computed once; the others each run, from the sizes
    the run measured (never from the host's clock: a simulated GPU's time is always modeled).
    """

    def __init__(
        self,
        steps: Sequence[Step],
        feeds: Sequence[Tensor],
        byte_offsets: Sequence[int],
        dry: DryPlan | None = None,
    ) -> None:
        """``dry``: a dry run's shapes, which time every step, the host's too."""
        self.steps = steps
        self.lanes = [
            (step.device.name, "copy" if step.kind is EventKind.TRANSFER else "compute")
            for step in steps
        ]
        self.deps = [step.deps for step in steps]
        self._cached: dict[tuple[Any, ...], dict[int, int]] = {}
        self.run_time: list[int] = []  # modeled steps whose durations need a run's sizes
        self.frames: dict[int, Any] = {}
        if dry is not None:
            self.modeled = [True] * len(steps)
            # a while loop's step: its run's laid-out length
            self.frames = {i: step.frame for i, step in enumerate(steps) if step.frame is not None}
            self.durations: list[int | None] = [
                None if i in self.frames else _dry_duration(step, dry)
                for i, step in enumerate(steps)
            ]
            self.sizes = _RunTimeSizes([], steps, feeds, byte_offsets)
            return
        self.modeled = [_modeled(step) for step in steps]
        self.durations = [None] * len(steps)
        # a while loop's steps with modeled ops: each run lasts its laid-out length
        self.frames = {
            i: step.frame
            for i, step in enumerate(steps)
            if step.frame is not None and self.modeled[i]
        }
        for i, step in enumerate(steps):
            if not self.modeled[i] or i in self.frames:
                continue
            if step.kind is EventKind.OP:
                ins = [_static_shape(t) for t in step.op.inputs]
                outs = [_static_shape(t) for t in step.op.outputs]
                if None not in ins and None not in outs:
                    self.durations[i] = _op_duration(step, ins, outs)  # type: ignore[arg-type]
                    continue
            else:
                size = tensor_bytes(step.tensor) if step.tensor is not None else 0
                if size is not None:
                    self.durations[i] = transfer_ns(size, step.device, step.peer)
                    continue
            self.run_time.append(i)
        dynamic = {
            id(t): t
            for i in self.run_time
            for t in _tensors_of(steps[i])
            if _static_shape(t) is None
        }
        self.sizes = _RunTimeSizes(list(dynamic.values()), steps, feeds, byte_offsets)
        # _cached: durations by the sizes that gave them, for the last few sets of sizes: a loop
        # fed full batches and a smaller last one models its steps once per size.

    @property
    def any_modeled(self) -> bool:
        return any(self.modeled)

    def _run_time_durations(self, out_bytes: Sequence[int], feeds: Sequence[Any]) -> dict[int, int]:
        key = self.sizes.key(out_bytes, feeds)
        cached = self._cached.get(key)
        if cached is not None:
            return cached
        shapes = self.sizes.shapes(out_bytes, feeds)

        def shape(tensor: Tensor) -> Shape:
            found = shapes.get(id(tensor))
            return found if found is not None else _static_shape(tensor)  # type: ignore[return-value]

        durations = {}
        for i in self.run_time:
            step = self.steps[i]
            if step.kind is EventKind.TRANSFER:
                assert step.tensor is not None
                durations[i] = transfer_ns(
                    _nbytes(step.tensor, shape(step.tensor)), step.device, step.peer
                )
                continue
            ins = [shape(t) for t in step.op.inputs]
            outs = [shape(t) for t in step.op.outputs]
            try:
                durations[i] = _op_duration(step, ins, outs)
            except (ValueError, IndexError, TypeError):
                # Shapes the sizes only approximate (rank unknown, several unknown dims) that
                # the op's cost rule cannot read: time the data the op moves instead.
                tensors = [*step.op.inputs, *step.op.outputs]
                moved = sum(_nbytes(t, shape) for t, shape in zip(tensors, [*ins, *outs]))
                durations[i] = _memory_bound_duration(step, moved)
        if len(self._cached) >= _CACHED_SIZES:
            self._cached.pop(next(iter(self._cached)))
        self._cached[key] = durations
        return durations

    def lay_out(
        self,
        measured: Sequence[int],
        count: int,
        out_bytes: Sequence[int],
        feeds: Sequence[Any],
    ) -> tuple[list[int], list[int], list[int]]:
        """Start, end (ns from the run's start) and timing source of the first ``count`` steps.

        ``out_bytes`` and ``feeds`` are the run's measured output sizes and fed values.
        """
        run_time = self._run_time_durations(out_bytes, feeds) if self.run_time else {}
        durations, sources = [0] * count, [0] * count
        for i in range(count):
            modeled = self.durations[i]
            if modeled is None:
                frame = self.frames.get(i)
                modeled = frame.makespan if frame is not None else run_time.get(i)
            if modeled is not None:
                durations[i], sources[i] = modeled, _MODELED
            else:
                durations[i], sources[i] = measured[i], _CLOCK
        starts, ends = lay_out_steps(self.lanes, self.deps, durations)
        return starts, ends, sources


def lay_out_steps(
    lanes: Sequence[Hashable], deps: Sequence[Sequence[int]], durations: Sequence[int]
) -> tuple[list[int], list[int]]:
    """Start and end of each step, in their order: a step starts once its lane (a device's
    stream or copy engine, one step at a time) is free and the earlier steps it waits for
    (``deps``) ended. Times in ns from the first step's start."""
    count = len(durations)
    starts, ends = [0] * count, [0] * count
    lane_free: dict[Hashable, int] = {}
    for i in range(count):
        ready = max((ends[d] for d in deps[i] if d < i), default=0)
        start = max(ready, lane_free.get(lanes[i], 0))
        end = start + durations[i]
        starts[i], ends[i] = start, end
        lane_free[lanes[i]] = end
    return starts, ends
