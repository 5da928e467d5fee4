"""Array backends: NumPy for the CPU and simulated GPUs, CuPy for real GPUs (imported lazily)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
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


def to_host(device: Device) -> Callable[[Any], Any] | None:
    """How to bring a value of ``device`` into host memory (None: it is already there)."""
    if device.backend == "cupy":
        from placeviz.runtime.backends import cupy_backend

        return cupy_backend.to_host
    return None


def from_host(device: Device) -> Callable[[Any], Any] | None:
    """How to put a host value onto ``device`` (None: host memory is the device's memory)."""
    if device.backend == "cupy":
        from placeviz.runtime.backends import cupy_backend

        return cupy_backend.from_host(device.physical.cuda_ordinal or 0)
    return None


def transfer(src: Device, dst: Device) -> Callable[[Any], Any] | None:
    """The copy an edge from ``src`` to ``dst`` needs; None when both share memory.

    The CPU and simulated GPUs all hold NumPy arrays in host memory, and logical GPUs carved
    from one physical GPU share its memory, so only edges that really cross memories copy.
    """
    if src.backend == "numpy" and dst.backend == "numpy":
        return None
    if src.backend == "numpy":
        return from_host(dst)
    if dst.backend == "numpy":
        return to_host(src)
    if src.physical.cuda_ordinal == dst.physical.cuda_ordinal:
        return None
    return from_host(dst)
