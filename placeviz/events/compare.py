"""``pv.compare(trace_a, trace_b)``: two placements of one graph side by side — which ops moved,
and what that changed on each device (ops, busy time, peak memory) and in the step time.

In JupyterLab it shows as one inspector per placement, side by side, moved ops marked and the
timelines on one time axis (``labextension/src/render/compare.ts``); elsewhere as a text table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeviz.contract import COMPARE_SCHEMA, MOVED_LISTED, EventKind
from placeviz.devices.spec import short_name
from placeviz.events.html import write_html
from placeviz.events.trace import DeviceSummary, Trace
from placeviz.units import data_size, duration, signed_duration

COMPARE_MIME_TYPE = "application/vnd.placeviz.compare+json"
# What a side's peak memory reads when its trace holds no memory events: a what-if models
# times only, and a run not fully traced recorded none (never 0 B, which would read as saved).
NOT_MODELED = "not modeled"
NOT_TRACED = "not traced"


@dataclass(frozen=True)
class DeviceChange:
    device: str
    ops: tuple[int, int]
    busy_s: tuple[float, float]  # in the last run
    # bytes; None where that side's trace has no memory events (a what-if, a run not fully traced)
    peak_memory: tuple[int | None, int | None]


@dataclass(frozen=True)
class MovedOp:
    name: str
    before: str  # device, full name
    after: str


class Comparison:
    """Two traces of one graph: ``moved``, ``step_s`` and ``devices`` (each a pair)."""

    def __init__(self, first: Trace, second: Trace, labels: Sequence[str] = ("a", "b")) -> None:
        if len(labels) != 2:
            raise ValueError(f"compare takes two labels, got {list(labels)!r}")
        self.traces = (first, second)
        self.labels = (str(labels[0]), str(labels[1]))
        self.step_s = (first.step_s, second.step_s)
        if not _same_graph(first, second):
            raise ValueError(
                "compare needs two traces of the same graph (their ops' names differ); compare "
                "two placements of one graph: two sessions, or trace.what_if(...)"
            )
        self.moved = _moved(first, second)
        first_run, second_run = (t.summary(t.runs[-1]["id"] if t.runs else -1) for t in self.traces)
        memory = (_has_memory(first), _has_memory(second))
        self.devices = [
            DeviceChange(name, *_pairs(first_run.get(name), second_run.get(name), memory))
            for name in dict.fromkeys([*first_run, *second_run])
        ]

    def __repr__(self) -> str:
        a, b = self.labels
        lines = [
            f"step: {a} {duration(self.step_s[0])}, {b} {duration(self.step_s[1])} "
            f"({signed_duration(self.step_s[1] - self.step_s[0])})",
            f"{'device':<24} {'ops':>9} {'busy':>21} {'peak memory':>23}",
        ]
        for d in self.devices:
            lines.append(
                f"{short_name(d.device):<24} {d.ops[0]:>4}→{d.ops[1]:<4} "
                f"{duration(d.busy_s[0]):>10}→{duration(d.busy_s[1]):<10} "
                f"{self._peak(d, 0):>11}→{self._peak(d, 1):<11}"
            )
        lines.append(f"{len(self.moved)} op(s) moved")
        lines += [
            f"  {m.name}: {short_name(m.before)} → {short_name(m.after)}"
            for m in self.moved[:MOVED_LISTED]
        ]
        if len(self.moved) > MOVED_LISTED:
            lines.append(f"  and {len(self.moved) - MOVED_LISTED} more")
        return "\n".join(lines)

    def _peak(self, device: DeviceChange, side: int) -> str:
        """A side's peak memory as text, or why it has none."""
        peak = device.peak_memory[side]
        if peak is not None:
            return data_size(peak)
        return NOT_MODELED if self.traces[side].prediction else NOT_TRACED

    def to_html(self, path: str | os.PathLike[str], title: str | None = None) -> None:
        """One self-contained HTML file with both placements side by side, as ``Trace.to_html``
        writes one: no network, no kernel needed."""
        title = title or f"placeviz · {self.labels[0]} vs {self.labels[1]}"
        write_html(self.to_document(), path, title, mime=COMPARE_MIME_TYPE)

    def to_document(self) -> dict[str, Any]:
        """The comparison document (schema ``placeviz-compare/1``) the browser renders."""
        return {
            "schema": COMPARE_SCHEMA,
            "labels": list(self.labels),
            "documents": [t.to_document() for t in self.traces],
            "step_ns": [round(s * 1e9) for s in self.step_s],
            "moved": [{"name": m.name, "from": m.before, "to": m.after} for m in self.moved],
            "devices": [
                {
                    "device": d.device,
                    "ops": list(d.ops),
                    "busy_ns": [round(s * 1e9) for s in d.busy_s],
                    "peak_bytes": list(d.peak_memory),
                }
                for d in self.devices
            ],
        }

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {COMPARE_MIME_TYPE: self.to_document(), "text/plain": repr(self)}


def compare(first: Trace, second: Trace, labels: Sequence[str] = ("a", "b")) -> Comparison:
    """Two placements of one graph side by side (``labels`` name them)."""
    return Comparison(first, second, labels)


def _placed(trace: Trace) -> dict[str, str]:
    names = {d["id"]: d["name"] for d in trace.devices}
    return {n["name"]: names[n["device"]] for n in trace.nodes if n["device"] is not None}


def _moved(first: Trace, second: Trace) -> list[MovedOp]:
    before, after = _placed(first), _placed(second)
    return [
        MovedOp(name, device, after[name])
        for name, device in before.items()
        if name in after and after[name] != device
    ]


def _same_graph(first: Trace, second: Trace) -> bool:
    return {n["name"] for n in first.nodes} == {n["name"] for n in second.nodes}


def _has_memory(trace: Trace) -> bool:
    """Whether the trace recorded memory at all (a what-if models none)."""
    kinds = trace.events["kind"]
    return bool(np.isin(kinds, [int(EventKind.ALLOC), int(EventKind.FREE)]).any())


def _pairs(
    first: DeviceSummary | None, second: DeviceSummary | None, memory: tuple[bool, bool]
) -> tuple[tuple[int, int], tuple[float, float], tuple[int | None, int | None]]:
    """(ops, busy seconds, peak memory) as [first, second]; a device a side lacks has zeros, and
    a side without memory events (``memory``) no peak (None)."""
    a = (first.ops, first.busy_s, first.peak_memory) if first else (0, 0.0, 0)
    b = (second.ops, second.busy_s, second.peak_memory) if second else (0, 0.0, 0)
    peaks = (a[2] if memory[0] else None, b[2] if memory[1] else None)
    return (a[0], b[0]), (a[1], b[1]), peaks
