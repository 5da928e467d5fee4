"""Event columns as the binary buffers a live view decodes (docs/inspector.md, "Live messages").

JavaScript has no cheap 64-bit integers, so times and byte counts travel as float64 (exact up to
2**53: 104 days of nanoseconds); times are made relative to the view's origin first.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from placeviz.events.recorder import COLUMNS

WIRE_DTYPES: dict[str, np.dtype] = {
    "kind": np.dtype("<i1"),
    "t0": np.dtype("<f8"),
    "t1": np.dtype("<f8"),
    "node": np.dtype("<i4"),
    "device": np.dtype("<i2"),
    "stream": np.dtype("<i2"),
    "bytes": np.dtype("<f8"),
    "source": np.dtype("<i1"),
    "run": np.dtype("<i4"),
    "peer": np.dtype("<i2"),
}
assert tuple(WIRE_DTYPES) == COLUMNS


def encode_events(columns: Mapping[str, np.ndarray], origin_ns: int) -> list[memoryview]:
    """One buffer per column, in ``COLUMNS`` order; times in ns since ``origin_ns``."""
    buffers = []
    for name in COLUMNS:
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
        for name, buffer in zip(COLUMNS, buffers, strict=True)
    }
