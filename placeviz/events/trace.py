"""A Trace: what one or more runs did, as tables of devices and nodes plus event columns.

It answers the profiler's questions (``summary``, ``memory_timeline``) and exports to Chrome's
Trace Event format (Perfetto, chrome://tracing) and to the placement document the browser renders.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from placeviz.contract import (
    COLUMN_NAMES,
    SCHEMA,
    EventKind,
    TimingSource,
    code_table,
)
from placeviz.events.html import output_bundle, write_html
from placeviz.events.memory_use import memory_in_use


class Predictor(Protocol):
    def predict(
        self, trace: Trace, moves: Mapping[str, str] | None, devices: int | Mapping[str, int] | None
    ) -> Trace: ...


@dataclass(frozen=True)
class DeviceSummary:
    name: str
    ops: int
    busy_s: float
    utilisation: float  # busy time over the traced span
    peak_memory: int  # bytes, from allocation events (0 when the run was not fully traced)
    reserved: int  # bytes the runtime holds on the device (see Session.reserved_bytes)
    bytes_in: int  # bytes transferred to this device
    bytes_out: int  # bytes transferred from this device


class Trace:
    """Events of a session's runs with the tables needed to read them."""

    def __init__(
        self,
        devices: Sequence[Mapping[str, Any]],
        nodes: Sequence[Mapping[str, Any]],
        edges: Sequence[Mapping[str, Any]],
        runs: Sequence[Mapping[str, Any]],
        events: Mapping[str, np.ndarray],
        prediction: str | None = None,
        predictor: Predictor | None = None,
    ) -> None:
        """``prediction``: the what-if question a predicted trace answers; ``predictor``: what
        answers one about this trace (a session's runs have one)."""
        self.prediction = prediction
        self._predictor = predictor
        self.devices = [dict(d) for d in devices]
        self.nodes = [dict(n) for n in nodes]
        self.edges = [dict(e) for e in edges]
        self.runs = [dict(r) for r in runs]
        self.events = dict(events)
        t0 = self.events["t0"]
        self.origin_ns = int(t0.min()) if len(t0) else 0
        self._node_names = {n["id"]: n["name"] for n in self.nodes}
        self._node_types = {n["id"]: n["type"] for n in self.nodes}

    def __len__(self) -> int:
        return len(self.events["kind"])

    def __repr__(self) -> str:
        what = f" prediction: {self.prediction}" if self.prediction else ""
        return (
            f"<pv.Trace {len(self.runs)} run(s), {len(self)} events, "
            f"{len(self.devices)} devices{what}>"
        )

    def what_if(
        self,
        moves: Mapping[str, str] | None = None,
        devices: int | Mapping[str, int] | None = None,
    ) -> Trace:
        """The last run again with ops moved (``{"MatMul_3": "/gpu:1"}``) or on another set of
        devices (``devices=4`` or ``{"GPU": 4}``: that many GPUs like the session's): a new
        Trace whose times are modeled, marked as a prediction."""
        if self._predictor is None:
            raise ValueError(
                "what_if needs a trace from a session (sess.trace(), RunMetadata.trace); this "
                "one was read or built without the graph it ran"
            )
        return self._predictor.predict(self, moves, devices)

    @property
    def step_s(self) -> float:
        """The last run's span: from its first op or transfer to its last."""
        if not self.runs:
            return 0.0
        return self._span_of(self._steps() & (self.events["run"] == self.runs[-1]["id"]))

    # -- questions -----------------------------------------------------------------------------
    def _of_kind(self, kind: EventKind) -> np.ndarray:
        return self.events["kind"] == int(kind)

    @property
    def span_s(self) -> float:
        runs = self._of_kind(EventKind.RUN)
        if not runs.any():
            return 0.0
        return self._span_of(runs | self._steps())

    def _steps(self) -> np.ndarray:
        return self._of_kind(EventKind.OP) | self._of_kind(EventKind.TRANSFER)

    def _span_of(self, events: np.ndarray) -> float:
        """Seconds from the first of ``events`` (a mask) to the end of the last."""
        if not events.any():
            return 0.0
        return float(self.events["t1"][events].max() - self.events["t0"][events].min()) / 1e9

    def summary(self, run: int | None = None) -> dict[str, DeviceSummary]:
        """Per device: ops run, busy time, utilisation, peak memory, bytes moved in and out; of
        one run (its id) when given, but the peak memory of the whole trace."""
        ev = self.events
        ops = self._of_kind(EventKind.OP)
        transfers = self._of_kind(EventKind.TRANSFER)
        if run is not None:
            ops, transfers = ops & (ev["run"] == run), transfers & (ev["run"] == run)
            span = self._span_of(ops | transfers) or 1e-12
        else:
            span = self.span_s or 1e-12
        result = {}
        for device in self.devices:
            mine = ev["device"] == device["id"]
            busy = float((ev["t1"][ops & mine] - ev["t0"][ops & mine]).sum()) / 1e9
            _, in_use = self.memory_timeline(device["name"])
            result[device["name"]] = DeviceSummary(
                name=device["name"],
                ops=int((ops & mine).sum()),
                busy_s=busy,
                utilisation=min(busy / span, 1.0),
                peak_memory=int(in_use.max()) if len(in_use) else 0,
                reserved=int(device.get("reserved", 0)),
                bytes_in=int(ev["bytes"][transfers & mine].sum()),
                bytes_out=int(ev["bytes"][transfers & (ev["peer"] == device["id"])].sum()),
            )
        return result

    def memory_timeline(self, device: str | int) -> tuple[np.ndarray, np.ndarray]:
        """(seconds since the trace began, bytes in use after each allocation or free)."""
        t0, in_use = memory_in_use(self.events, self._device_id(device))
        return (t0 - self.origin_ns) / 1e9, in_use

    def _device_id(self, device: str | int) -> int:
        if isinstance(device, int):
            return device
        for record in self.devices:
            if device in (record["name"], record["name"].rsplit("device:", 1)[-1]):
                return int(record["id"])
        names = ", ".join(d["name"] for d in self.devices)
        raise KeyError(f"No device {device!r} in this trace; its devices: {names}")

    # -- exports -------------------------------------------------------------------------------
    def to_document(self) -> dict[str, Any]:
        """The placement document (schema ``placeviz/1``): what the browser renders."""
        return {
            "schema": SCHEMA,
            "origin_ns": self.origin_ns,
            "devices": self.devices,
            "nodes": self.nodes,
            "edges": self.edges,
            "runs": self.runs,
            **({"prediction": self.prediction} if self.prediction else {}),
            "event_kinds": code_table(EventKind),
            "timing_sources": code_table(TimingSource),
            "events": {name: self._document_column(name) for name in COLUMN_NAMES},
        }

    def _document_column(self, name: str) -> list[int]:
        column = self.events[name]
        if name == "t0":
            return (column - self.origin_ns).tolist()
        if name == "t1":  # an unset end (0) would land before the origin
            return np.maximum(column - self.origin_ns, 0).tolist()
        return column.tolist()

    def to_networkx(self) -> Any:
        """The graph as a ``networkx.DiGraph``: per op its type, scope, requested and assigned
        device, reason, source line, time (``time_ns``, summed over the traced runs; None where
        it did not run) and output bytes; per edge the bytes it carries and whether it crosses
        devices (``networkx_export``)."""
        from placeviz.events.networkx_export import tables_to_networkx

        ops = self._of_kind(EventKind.OP)
        ran, which = np.unique(self.events["node"][ops], return_inverse=True)
        spent = np.bincount(which, weights=(self.events["t1"] - self.events["t0"])[ops])
        time_ns = dict(zip(ran.tolist(), np.rint(spent).astype(np.int64).tolist()))
        return tables_to_networkx(self.devices, self.nodes, self.edges, time_ns)

    def plot_timeline(self) -> Any:
        """A plotly figure: each op as a bar on its device's row (``placeviz[plot]``)."""
        from placeviz.events.plots import plot_timeline

        return plot_timeline(self)

    def plot_memory(self) -> Any:
        """A plotly figure: bytes in use per device over time (``placeviz[plot]``)."""
        from placeviz.events.plots import plot_memory

        return plot_memory(self)

    def plot_devices(self) -> Any:
        """A plotly figure: busy time per device, with ops and memory on hover."""
        from placeviz.events.plots import plot_devices

        return plot_devices(self)

    def to_chrome_trace(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """Chrome Trace Event JSON: a process per task, a compute and a copy thread per device,
        memory counters and transfer flow arrows. Written to ``path`` when given; returned
        either way."""
        from placeviz.events.chrome import chrome_trace

        document = chrome_trace(self)
        if path is not None:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(document, handle)
        return document

    def to_html(self, path: str | os.PathLike[str], title: str = "placeviz inspector") -> None:
        """One self-contained HTML file with the inspector: no network, no kernel needed."""
        write_html(self.to_document(), path, title)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """In a notebook a Trace shows as the inspector (JupyterLab with placeviz installed)."""
        return output_bundle(self.to_document(), repr(self))

    def node_name(self, node_id: int) -> str:
        return self._node_names.get(node_id, f"#{node_id}")

    def node_type(self, node_id: int) -> str:
        return self._node_types.get(node_id, "?")
