"""``pv.config.experimental``: memory growth, and TF 2.0's older names for the config calls."""

from __future__ import annotations

from placeviz.devices import context as _context
from placeviz.devices.context import PhysicalDevice, VirtualDeviceConfiguration


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    _context.context().set_memory_growth(device, enable)


def get_memory_growth(device: PhysicalDevice) -> bool:
    return _context.context().get_memory_growth(device)


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    return _context.context().list_physical_devices(device_type)


__all__ = [
    "VirtualDeviceConfiguration",
    "get_memory_growth",
    "list_physical_devices",
    "set_memory_growth",
]
