"""``Trace.plot_timeline``, ``plot_memory`` and ``plot_devices``: plotly figures, one plotly
trace per device, holding the trace's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples import documents

go = pytest.importorskip("plotly.graph_objects")


@pytest.fixture
def towers() -> pv.Trace:
    return documents.towers()  # the seeds' towers, fully traced: a matmul on GPU:2 and GPU:3


def test_the_timeline_has_a_row_per_device_with_its_ops(towers: pv.Trace) -> None:
    figure = towers.plot_timeline()
    assert isinstance(figure, go.Figure)
    assert [t.name for t in figure.data] == ["CPU:0", "GPU:0", "GPU:1", "GPU:2", "GPU:3"]
    events = towers.events
    for row, device in zip(figure.data, towers.devices):
        ops = (events["device"] == device["id"]) & np.isin(
            events["kind"], [int(EventKind.OP), int(EventKind.TRANSFER)]
        )
        assert len(row.x) == int(ops.sum())
        assert np.allclose(row.x, (events["t1"][ops] - events["t0"][ops]) / 1e6)
    gpu3 = figure.data[4]
    placed = [
        n["name"]
        for n in towers.nodes
        if n["type"] == "MatMul" and towers.devices[n["device"]]["name"].endswith("GPU:3")
    ]
    assert len(placed) == 1 and placed[0] in gpu3.text and set(gpu3.y) == {"GPU:3"}


def test_memory_and_device_figures_show_the_summary(towers: pv.Trace) -> None:
    memory = towers.plot_memory()
    assert len(memory.data) == len(towers.devices)
    summary = towers.summary()
    for line, (name, stats) in zip(memory.data, summary.items()):
        assert max(line.y, default=0) == stats.peak_memory, name
    devices = towers.plot_devices()
    assert len(devices.data) == len(towers.devices)
    events = towers.events
    ran = events["kind"] == int(EventKind.OP)
    for bar, stats, device in zip(devices.data, summary.values(), towers.devices):
        assert bar.y[0] == pytest.approx(stats.busy_s * 1e3)
        assert bar.customdata[0][0] == int((ran & (events["device"] == device["id"])).sum())
    assert [bar.customdata[0][0] for bar in devices.data] == [1, 0, 0, 3, 3]  # the seeds' towers
    devices.to_html(include_plotlyjs=False)  # renders to a page
