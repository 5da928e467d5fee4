"""``pv.compare(trace_a, trace_b)``: two placements of one graph side by side — which ops moved,
and what that changed on each device (ops, busy time, peak memory) and in the step time.

In JupyterLab it shows as one inspector per placement, side by side, moved ops marked and the
timelines on one time axis (``labextension/src/render/compare.ts``); elsewhere as a text table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeviz.contract import COMPARE_SCHEMA, EventKind
from placeviz.devices.spec import short_name
from placeviz.events.trace import Trace

COMPARE_MIME_TYPE = "application/vnd.placeviz.compare+json"
MOVED_LISTED = 20  # the text lists this many moved ops; the document carries them all


@dataclass(frozen=True)
class DeviceChange:
    device: str
    ops: tuple[int, int]
    busy_s: tuple[float, float]  # in the last run
    peak_memory: tuple[int, int]  # bytes (0 where a run was not fully traced)


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
        summaries = [_last_run_summary(t) for t in self.traces]
        names = list(dict.fromkeys([*summaries[0], *summaries[1]]))
        empty = (0, 0.0, 0)
        self.devices = [
            DeviceChange(
                name,
                *zip(summaries[0].get(name, empty), summaries[1].get(name, empty), strict=True),  # type: ignore[arg-type]
            )
            for name in names
        ]

    def __repr__(self) -> str:
        a, b = self.labels
        lines = [
            f"step: {a} {_ms(self.step_s[0])}, {b} {_ms(self.step_s[1])} "
            f"({_signed_ms(self.step_s[1] - self.step_s[0])})",
            f"{'device':<24} {'ops':>9} {'busy':>21} {'peak memory':>23}",
        ]
        for d in self.devices:
            lines.append(
                f"{short_name(d.device):<24} {d.ops[0]:>4}→{d.ops[1]:<4} "
                f"{_ms(d.busy_s[0]):>10}→{_ms(d.busy_s[1]):<10} "
                f"{_mib(d.peak_memory[0]):>11}→{_mib(d.peak_memory[1]):<11}"
            )
        lines.append(f"{len(self.moved)} op(s) moved")
        lines += [
            f"  {m.name}: {short_name(m.before)} → {short_name(m.after)}" for m in self.moved[:20]
        ]
        if len(self.moved) > 20:
            lines.append(f"  and {len(self.moved) - 20} more")
        return "\n".join(lines)

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


def _last_run_summary(trace: Trace) -> dict[str, tuple[int, float, int]]:
    """Per device name: ops and busy seconds in the last run, and peak memory."""
    ev = trace.events
    last = trace.runs[-1]["id"] if trace.runs else None
    ops = (ev["kind"] == int(EventKind.OP)) & (ev["run"] == last)
    peaks = {name: s.peak_memory for name, s in trace.summary().items()}
    result = {}
    for device in trace.devices:
        mine = ops & (ev["device"] == device["id"])
        busy = float(np.sum(ev["t1"][mine] - ev["t0"][mine])) / 1e9
        result[device["name"]] = (int(mine.sum()), busy, peaks.get(device["name"], 0))
    return result


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def _signed_ms(seconds: float) -> str:
    return f"{seconds * 1e3:+.3f} ms"


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"
