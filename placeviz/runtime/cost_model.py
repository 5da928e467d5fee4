"""What the cost-model placer (``ConfigProto(placer="cost")``) believes an op costs on a device:
the roofline that times simulated GPUs (``simulation.py``), with a GPU's datasheet profile or the
host's assumed one, on the shapes the graph knows before the first run (an unknown dimension
takes the size the run's fed values give it, or ``UNKNOWN_DIM``, a typical batch, when the first
run feeds nothing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeviz.devices.context import Device
from placeviz.devices.profiles import DEFAULT_PROFILE, HOST_PROFILE, GPUProfile, get_profile
from placeviz.graph.core import Operation, Tensor
from placeviz.runtime.simulation import copy_seconds, memory_bound_seconds, roofline_seconds

Shape = tuple[int, ...]
UNKNOWN_DIM = 32


class RooflineCostModel:
    """Seconds per op on a device, seconds per tensor moved between devices, bytes an op holds."""

    def __init__(self, devices: Sequence[Device]) -> None:
        gpus = [_gpu_profile(d) for d in devices if d.device_type == "GPU"]
        # A tensor that crosses devices takes the slowest link of the session's GPUs.
        self._slowest_link = min((p.host_link_bandwidth for p in gpus), default=None)
        self.unknown_dim = UNKNOWN_DIM

    def learn_sizes(self, fed: Mapping[Tensor, Any]) -> None:
        """Unknown dimensions (a batch) take the size the first fed value gives one."""
        for tensor, value in fed.items():
            dims = tensor.shape.dims or ()
            for i, dim in enumerate(dims):
                if dim is None and i < len(getattr(value, "shape", ())):
                    self.unknown_dim = max(int(value.shape[i]), 1)
                    return

    def shape(self, tensor: Tensor) -> Shape:
        dims = tensor.shape.dims
        if dims is None:
            return (self.unknown_dim,)
        return tuple(self.unknown_dim if d is None else d for d in dims)

    def nbytes(self, tensor: Tensor) -> int:
        count = 1
        for d in self.shape(tensor):
            count *= d
        return count * tensor.dtype.size

    def op_seconds(self, op: Operation, device: Device) -> float:
        profile = _gpu_profile(device) if device.device_type == "GPU" else HOST_PROFILE
        ins = [self.shape(t) for t in op.inputs]
        outs = [self.shape(t) for t in op.outputs]
        try:
            return roofline_seconds(op, profile, ins, outs)
        except (ValueError, IndexError, TypeError):
            # A cost rule that cannot read the assumed shapes: time the data the op moves.
            return memory_bound_seconds(
                sum(self.nbytes(t) for t in (*op.inputs, *op.outputs)), profile
            )

    def transfer_seconds(self, tensor: Tensor) -> float:
        if self._slowest_link is None:
            return 0.0
        return copy_seconds(self.nbytes(tensor), self._slowest_link)

    def held_bytes(self, op: Operation) -> int:
        """What the op needs room for on its device: a variable, its value for the session's
        life and, while it is initialized, its initial value beside it (twice its size). A
        step's tensors come and go (the run checks them against the device's limit)."""
        is_variable = op.op_def.ref_output and not op.inputs
        return 2 * self.nbytes(op.outputs[0]) if is_variable else 0


def _gpu_profile(device: Device) -> GPUProfile:
    return device.physical.profile or get_profile(DEFAULT_PROFILE)
