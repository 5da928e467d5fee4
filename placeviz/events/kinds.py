"""Event kinds and timing sources, as small integers: they fill the recorder's columns."""

from __future__ import annotations

from enum import IntEnum


class EventKind(IntEnum):
    RUN = 0  # t0..t1: one Session.run
    PLACEMENT = 1  # t0: an op was placed (node, device)
    OP = 2  # t0..t1: an op ran (node, device, stream, bytes out)
    TRANSFER = 3  # t0..t1: a tensor moved (node = producer, device = destination, peer = source)
    ALLOC = 4  # t0: bytes allocated on device for node's output
    FREE = 5  # t0: those bytes freed after the last consumer ran


class TimingSource(IntEnum):
    NONE = 0
    CLOCK = 1  # the host's monotonic clock around the kernel
    CUDA_EVENT = 2  # CUDA events recorded on the device's stream
    MODELED = 3  # a simulated GPU: roofline duration laid out by a discrete-event simulation

    @property
    def label(self) -> str:
        return {0: "none", 1: "clock", 2: "cuda-event", 3: "modeled"}[int(self)]


KIND_NAMES = {int(k): k.name.lower() for k in EventKind}
SOURCE_NAMES = {int(s): s.label for s in TimingSource}
