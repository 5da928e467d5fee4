"""``pv.debugging``: the switch for the placement log."""

from __future__ import annotations

from placeviz.devices import context as _context


def set_log_device_placement(enabled: bool) -> None:
    """Sessions created afterwards log each op's device once, at its first placement."""
    _context.context().log_device_placement = bool(enabled)


def get_log_device_placement() -> bool:
    return _context.context().log_device_placement
