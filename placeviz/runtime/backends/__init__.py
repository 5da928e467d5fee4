"""Array backends: NumPy for the CPU and simulated GPUs, CuPy for real GPUs (imported lazily).

Copies between devices are cuda_runtime.py's: the CPU and simulated GPUs all hold NumPy arrays
in host memory, so only edges to or from a real GPU copy anything.
"""

from __future__ import annotations

import contextlib
from typing import Any

from placeviz.devices.context import Device


def array_module(device: Device) -> Any:
    if device.backend == "cupy":
        from placeviz.runtime.backends import cupy_backend

        return cupy_backend.cupy()
    import numpy

    return numpy


def device_scope(device: Device) -> contextlib.AbstractContextManager[Any]:
    """Make ``device`` current while its kernels are built (their constants live there)."""
    if device.backend == "cupy":
        from placeviz.runtime.backends import cupy_backend

        return cupy_backend.cupy().cuda.Device(device.physical.cuda_ordinal or 0)
    return contextlib.nullcontext()
