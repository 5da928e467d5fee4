"""Durations and sizes as people read them, in the unit that reads best: what explanations and
text summaries print. This module imports nothing of placeviz, so every layer may use it."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """1.5 s, 3.2 ms, 40 µs."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e6:.3g} µs"


def signed_duration(seconds: float) -> str:
    """+1.2 ms, −40 µs: a change."""
    return ("+" if seconds >= 0 else "\u2212") + duration(abs(seconds))


def data_size(size: float) -> str:
    """7.9 GiB, 512 KiB, 12 B."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.0f} B"
