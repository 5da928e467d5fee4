"""Event columns as the binary buffers a live view decodes (docs/inspector.md, "Live messages").

Each column travels as its contract type (placeviz/contract.py); times are made relative to the
view's origin first.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from placeviz.contract import COLUMN_NAMES, EVENT_COLUMNS

WIRE_DTYPES = {column.name: np.dtype(column.wire) for column in EVENT_COLUMNS}


def encode_events(columns: Mapping[str, np.ndarray], origin_ns: int) -> list[memoryview]:
    """One buffer per column, in ``COLUMN_NAMES`` order; times in ns since ``origin_ns``."""
    buffers = []
    for name in COLUMN_NAMES:
        column = columns[name]
        if name in ("t0", "t1"):
            # An unset t1 (0) would land before the origin: clamped, as in Trace.to_document.
            column = np.maximum(column - origin_ns, 0)
        buffers.append(memoryview(np.ascontiguousarray(column, dtype=WIRE_DTYPES[name])))
    return buffers


def decode_events(buffers: list[bytes | memoryview]) -> dict[str, np.ndarray]:
    """The inverse of ``encode_events`` (times stay relative): for tests and tools."""
    return {
        name: np.frombuffer(buffer, dtype=WIRE_DTYPES[name])
        for name, buffer in zip(COLUMN_NAMES, buffers, strict=True)
    }
