"""CuPy on real GPUs. Only imported when a session has a real GPU device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placeviz.devices import cuda


def cupy() -> Any:
    module = cuda.cupy_module()
    if module is None:
        raise RuntimeError("A real GPU device needs CuPy: pip install 'placeviz[cuda12]'")
    return module


def to_host(value: Any) -> Any:
    return cupy().asnumpy(value)


def from_host(ordinal: int) -> Callable[[Any], Any]:
    module = cupy()
    device = module.cuda.Device(ordinal)

    def put(value: Any) -> Any:
        with device:
            return module.asarray(value)

    return put


def use_device(ordinal: int) -> Callable[[], None]:
    """Make ``ordinal`` the current CUDA device for the kernels that follow."""
    return cupy().cuda.Device(ordinal).use
