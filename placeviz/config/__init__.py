"""``pv.config``: TensorFlow 2's device configuration, plus simulated GPUs.

Changes to visible, physical or logical devices must come before the runtime starts (the first
``Session.run``); afterwards they raise RuntimeError, as in TensorFlow.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from placeviz.config import experimental
from placeviz.devices import context as _context
from placeviz.devices.context import (
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    VirtualDeviceConfiguration,
)


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    return _context.context().list_physical_devices(device_type)


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    return _context.context().list_logical_devices(device_type)


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    return _context.context().get_visible_devices(device_type)


def set_visible_devices(
    devices: PhysicalDevice | Iterable[PhysicalDevice], device_type: str | None = None
) -> None:
    _context.context().set_visible_devices(devices, device_type)


def set_logical_device_configuration(
    device: PhysicalDevice, logical_devices: Sequence[LogicalDeviceConfiguration] | None
) -> None:
    _context.context().set_logical_device_configuration(device, logical_devices)


def get_logical_device_configuration(
    device: PhysicalDevice,
) -> list[LogicalDeviceConfiguration] | None:
    return _context.context().get_logical_device_configuration(device)


def set_soft_device_placement(enabled: bool) -> None:
    """Sessions created afterwards use soft placement unless their config says otherwise."""
    _context.context().soft_placement = bool(enabled)


def get_soft_device_placement() -> bool:
    return _context.context().soft_placement


def simulate_gpus(n: int, profile: str = "H100", memory_limit_mb: int | None = None) -> None:
    """Use ``n`` simulated GPUs of a datasheet profile instead of the machine's (placeviz only).

    Same as the environment variables PLACEVIZ_SIMULATED_GPUS=n and PLACEVIZ_SIMULATED_PROFILE.
    """
    _context.context().simulate_gpus(n, profile, memory_limit_mb)


def reset_devices() -> None:
    """Forget all device configuration and the initialized lock (placeviz only).

    For tests and notebooks that compare device setups; sessions created before keep theirs.
    """
    _context.reset()


def set_cluster_tls(enabled: bool) -> None:
    """Clusters started and joined from now on use Dask's TLS (placeviz only): scheduler, tasks
    and clients authenticate each other with certificates (Dask's configured ones, else a
    per-user pair placeviz makes). Task processes inherit it; every client of a cluster needs it.
    """
    import os

    from placeviz.cluster.security import ENVIRONMENT

    if enabled:
        os.environ[ENVIRONMENT] = "1"
    else:
        os.environ.pop(ENVIRONMENT, None)


set_virtual_device_configuration = set_logical_device_configuration
get_virtual_device_configuration = get_logical_device_configuration

__all__ = [
    "LogicalDevice",
    "LogicalDeviceConfiguration",
    "PhysicalDevice",
    "VirtualDeviceConfiguration",
    "experimental",
    "get_logical_device_configuration",
    "get_soft_device_placement",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "reset_devices",
    "set_cluster_tls",
    "set_logical_device_configuration",
    "set_soft_device_placement",
    "set_visible_devices",
    "simulate_gpus",
]
