"""One length per run: the run record the header and the run list read says what the run's RUN
event says (on simulated GPUs, the model's time), and on which clock."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind, TimingSource


@pytest.mark.parametrize(("gpus", "modeled"), [(0, False), (2, True)])
def test_each_run_record_spans_its_run_event_and_names_its_clock(gpus: int, modeled: bool) -> None:
    if gpus:
        pv.config.simulate_gpus(gpus)
    with pv.device("/gpu:0" if gpus else "/cpu:0"):
        x = pv.placeholder(pv.float32, [256, 256], name="x")
        y = pv.matmul(x, x, name="y")
    with pv.Session() as sess:
        for _ in range(3):
            sess.run(y, {x: np.ones((256, 256), np.float32)})
        document = sess.trace(runs=None).to_document()
    events = document["events"]
    origin = document["origin_ns"]
    run_events = {
        events["run"][i]: (events["t0"][i], events["t1"][i], events["source"][i])
        for i in range(len(events["kind"]))
        if events["kind"][i] == EventKind.RUN
    }
    assert len(document["runs"]) == 3
    for record in document["runs"]:
        t0, t1, source = run_events[record["id"]]
        assert (record["t0"] - origin, record["t1"] - origin) == (t0, t1)
        assert record["modeled"] is modeled
        assert (source == TimingSource.MODELED) is modeled
