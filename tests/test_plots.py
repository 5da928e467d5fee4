"""``Trace.plot_timeline``, ``plot_memory`` and ``plot_devices``: plotly figures, one plotly
trace per device, holding the trace's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples.towers import build_towers

go = pytest.importorskip("plotly.graph_objects")


@pytest.fixture
def towers() -> pv.Trace:
    pv.config.simulate_gpus(4)
    total = build_towers()
    sess = pv.Session()
    sess.run(total, options=pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE))
    return sess.trace()


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
    for bar, stats in zip(devices.data, summary.values()):
        assert bar.y[0] == pytest.approx(stats.busy_s * 1e3)
        assert bar.customdata[0][0] == stats.ops
    devices.to_html(include_plotlyjs=False)  # renders to a page
