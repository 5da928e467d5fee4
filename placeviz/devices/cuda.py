"""Real GPUs, found through CuPy. Imported lazily: placeviz works where CUDA does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CudaDeviceInfo:
    ordinal: int  # CUDA's index, after CUDA_VISIBLE_DEVICES renumbering
    name: str
    memory_bytes: int
    pci_bus_id: str
    compute_capability: str


def cupy_module() -> Any:
    """CuPy, or None where it is missing or has no usable driver."""
    try:
        import cupy
    except Exception:
        return None
    return cupy


def discover() -> list[CudaDeviceInfo]:
    """The GPUs this process may use; CUDA itself applies CUDA_VISIBLE_DEVICES."""
    cupy = cupy_module()
    if cupy is None:
        return []
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return []
    found = []
    for ordinal in range(count):
        props = cupy.cuda.runtime.getDeviceProperties(ordinal)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        bus = f"{props['pciDomainID']:04x}:{props['pciBusID']:02x}:{props['pciDeviceID']:02x}.0"
        found.append(
            CudaDeviceInfo(
                ordinal=ordinal,
                name=name,
                memory_bytes=int(props["totalGlobalMem"]),
                pci_bus_id=bus,
                compute_capability=f"{props['major']}.{props['minor']}",
            )
        )
    return found
