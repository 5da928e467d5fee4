"""The card's own reading of its used memory (NVML), sampled while a run is in flight.

The memory panel's per-op memory is what placeviz's tensors hold; the card's reading also
counts the pools' reservations, CUDA's context and its libraries. Side by side they show what
the runtime costs on the card. Needs ``nvidia-ml-py`` (``placeviz[cuda12]``); without it, or
where NVML has no driver, a session simply has no card readings.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from placeviz.devices.context import Device

_PERIOD_S = 0.01


def _bus_key(bus_id: str) -> tuple[int, ...]:
    """``0000:1b:00.0`` and NVML's ``00000000:1B:00.0`` alike, as numbers."""
    domain, bus, rest = bus_id.strip().lower().split(":")
    slot, function = rest.split(".")
    return int(domain, 16), int(bus, 16), int(slot, 16), int(function, 16)


class CardSampler:
    """Samples every card behind ``devices`` every 10 ms between ``start`` and ``stop``.

    Each sample is (host clock ns, device id, used bytes); the device id is the first of the
    session's devices carved from that card, so views can find the card's logical devices.
    """

    def __init__(self, nvml: Any, cards: list[tuple[Any, int]]) -> None:
        self._nvml = nvml
        self._cards = cards
        self._samples: list[tuple[int, int, int]] = []
        self._active = threading.Event()
        self._lock = threading.Lock()  # a sample and a stop do not interleave
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="placeviz NVML", daemon=True)
        self._thread.start()

    @classmethod
    def for_devices(cls, devices: Sequence[Device]) -> CardSampler | None:
        """A sampler for the real GPUs among ``devices`` (their ids: their positions), or None."""
        firsts: dict[str, int] = {}
        for index, device in enumerate(devices):
            if device.backend == "cupy":
                firsts.setdefault(device.physical.pci_bus_id, index)
        if not firsts:
            return None
        try:
            import pynvml

            pynvml.nvmlInit()
            handles = {}
            for i in range(pynvml.nvmlDeviceGetCount()):
                handle = pynvml.nvmlDeviceGetHandleByIndex(i)
                bus = pynvml.nvmlDeviceGetPciInfo(handle).busId
                handles[_bus_key(bus.decode() if isinstance(bus, bytes) else bus)] = handle
        except Exception:  # no nvidia-ml-py, or no driver for it
            return None
        keys = {bus: _bus_key(bus) for bus in firsts}
        cards = [(handles[keys[bus]], i) for bus, i in firsts.items() if keys[bus] in handles]
        return cls(pynvml, cards) if cards else None

    def _sample(self) -> None:
        now = time.perf_counter_ns()
        for handle, device in self._cards:
            used = int(self._nvml.nvmlDeviceGetMemoryInfo(handle).used)
            self._samples.append((now, device, used))

    def _loop(self) -> None:
        while self._active.wait() and not self._stopped:
            with self._lock:
                if self._active.is_set():
                    self._sample()
            time.sleep(_PERIOD_S)

    def start(self) -> None:
        self._sample()
        self._active.set()

    def stop(self) -> list[tuple[int, int, int]]:
        """End sampling with one last reading; the samples since ``start``."""
        with self._lock:
            self._active.clear()
            self._sample()
            samples, self._samples = self._samples, []
        return samples

    def close(self) -> None:
        self._stopped = True
        self._active.set()
