"""Memory in use on a device, from a run's ALLOC and FREE events: one derivation for the trace's
memory timeline and the peaks a session keeps (``allow_growth`` reserves up to them)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from placeviz.contract import EventKind

_ALLOC, _FREE = int(EventKind.ALLOC), int(EventKind.FREE)


def memory_in_use(columns: Mapping[str, np.ndarray], device: int) -> tuple[np.ndarray, np.ndarray]:
    """(each allocation's or free's t0, in time order; bytes in use on ``device`` after it)."""
    kinds = columns["kind"]
    mine = ((kinds == _ALLOC) | (kinds == _FREE)) & (columns["device"] == device)
    order = np.argsort(columns["t0"][mine], kind="stable")
    sizes = columns["bytes"][mine].astype(np.int64)
    delta = np.where(kinds[mine] == _ALLOC, sizes, -sizes)[order]
    return columns["t0"][mine][order], np.cumsum(delta)


def peak_bytes(columns: Mapping[str, np.ndarray]) -> dict[int, int]:
    """The most bytes each device that allocated held at once."""
    kinds = columns["kind"]
    devices = np.unique(columns["device"][(kinds == _ALLOC) | (kinds == _FREE)])
    return {int(d): int(memory_in_use(columns, int(d))[1].max()) for d in devices}
