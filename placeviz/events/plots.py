"""A trace as plotly figures (``pip install placeviz[plot]``), which render in any front end that
shows plotly: Colab, VS Code, an nbconvert export, a script's ``fig.show()``.

Each figure has one plotly trace per device (its legend entry toggles the device, and the
timeline's waits with it), times in ms since the trace's first event, devices named short
(``GPU:0``, ``/job:ps/task:1/CPU:0``) as the placement log names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from placeviz.contract import EventKind
from placeviz.devices.spec import short_name

if TYPE_CHECKING:
    from placeviz.events.trace import Trace


def _plotly() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as missing:
        raise ImportError(
            "Trace plots need plotly: python3 -m pip install 'placeviz[plot]'"
        ) from missing
    return go


def _ms(trace: Trace, ns: np.ndarray) -> np.ndarray:
    return (ns - trace.origin_ns) / 1e6


def plot_timeline(trace: Trace) -> Any:
    """Each op as a bar on its device's row, from its start for its duration (hover: op name,
    type, duration); transfers are bars on the receiving device's row, marked 'copy'; a cluster
    task's waits for other tasks are grey hatched bars on its device's row, toggled with it."""
    go = _plotly()
    events = trace.events
    figure = go.Figure()
    shown = (events["kind"] == int(EventKind.OP)) | (events["kind"] == int(EventKind.TRANSFER))
    for device in trace.devices:
        mine = shown & (events["device"] == device["id"])
        label = short_name(device["name"])
        copies = events["kind"][mine] == int(EventKind.TRANSFER)
        names = [
            ("copy " if copy else "") + trace.node_name(int(node))
            for node, copy in zip(events["node"][mine], copies)
        ]
        duration = (events["t1"][mine] - events["t0"][mine]) / 1e6
        figure.add_trace(
            go.Bar(
                name=label,
                orientation="h",
                y=[label] * int(mine.sum()),
                x=duration,
                base=_ms(trace, events["t0"][mine]),
                text=names,
                hovertemplate="%{text}<br>%{x:.3f} ms<extra>" + label + "</extra>",
                legendgroup=label,
            )
        )
        waits = (events["kind"] == int(EventKind.WAIT)) & (events["device"] == device["id"])
        if waits.any():
            figure.add_trace(
                go.Bar(
                    name=f"{label} waiting",
                    orientation="h",
                    y=[label] * int(waits.sum()),
                    x=(events["t1"][waits] - events["t0"][waits]) / 1e6,
                    base=_ms(trace, events["t0"][waits]),
                    text=[f"before {trace.node_name(int(n))}" for n in events["node"][waits]],
                    hovertemplate="waiting for other tasks %{text}<br>%{x:.3f} ms<extra>"
                    + label
                    + "</extra>",
                    marker={"color": "rgba(158,158,158,0.35)", "pattern": {"shape": "/"}},
                    legendgroup=label,
                    showlegend=False,
                )
            )
    figure.update_layout(
        barmode="overlay",
        title="Ops per device over time",
        xaxis_title="ms since the first event",
        yaxis={"autorange": "reversed"},
    )
    return figure


def plot_memory(trace: Trace) -> Any:
    """Bytes in use on each device over time (a fully traced run records them)."""
    go = _plotly()
    figure = go.Figure()
    for device in trace.devices:
        seconds, in_use = trace.memory_timeline(device["id"])
        figure.add_trace(
            go.Scatter(
                name=short_name(device["name"]),
                x=seconds * 1e3,
                y=in_use,
                mode="lines",
                line={"shape": "hv"},
            )
        )
    figure.update_layout(
        title="Memory in use per device",
        xaxis_title="ms since the first event",
        yaxis_title="bytes",
    )
    return figure


def plot_devices(trace: Trace) -> Any:
    """Per device: ops run, busy time, peak memory and bytes moved in (``Trace.summary``)."""
    go = _plotly()
    figure = go.Figure()
    for name, stats in trace.summary().items():
        figure.add_trace(
            go.Bar(
                name=short_name(name),
                x=[short_name(name)],
                y=[stats.busy_s * 1e3],
                customdata=[[stats.ops, stats.peak_memory, stats.bytes_in]],
                hovertemplate=(
                    "busy %{y:.3f} ms<br>%{customdata[0]} ops<br>peak %{customdata[1]} bytes"
                    "<br>%{customdata[2]} bytes in<extra></extra>"
                ),
            )
        )
    figure.update_layout(title="Busy time per device", yaxis_title="ms", showlegend=True)
    return figure
