"""What the browser tests run and read back: a cell's code in a fresh graph, the towers loop
several tests draw, and each run's active span in a document."""

from __future__ import annotations

from typing import Any

import placeviz as pv
from placeviz.contract import EventKind


def build(code: str, gpus: int) -> dict[str, Any]:
    """Run ``code`` (a cell's body) in a fresh graph on ``gpus`` simulated GPUs; its names."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus)
    pv.reset_default_graph()
    namespace: dict[str, Any] = {}
    exec(compile(code, "<cell>", "exec"), namespace)
    return namespace


def towers_loop(run_options: str = "") -> str:
    """Two towers and a sum, run four times (``run_options``: an argument for ``sess.run``): a
    loop's runs, their idle gaps collapsed on the axes."""
    return f"""\
import placeviz as tf

with tf.device("/cpu:0"):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="input")
losses = []
for i in range(2):
    with tf.device("/gpu:%d" % i), tf.name_scope("tower_%d" % i):
        h = tf.nn.relu(tf.matmul(x, x, name="MatMul"), name="Relu")
        losses.append(tf.reduce_sum(h, name="loss"))
with tf.device("/cpu:0"):
    total = tf.add_n(losses, name="total")
sess = tf.Session()
for _ in range(4):
    sess.run(total{run_options})
"""


def run_spans(document: dict[str, Any]) -> dict[int, tuple[int, int]]:
    """Per run id, its first op or transfer start and its last one's end, ns since the origin."""
    events = document["events"]
    spans: dict[int, tuple[int, int]] = {}
    for kind, t0, t1, run in zip(events["kind"], events["t0"], events["t1"], events["run"]):
        if kind in (EventKind.OP, EventKind.TRANSFER) and run >= 0:
            lo, hi = spans.get(run, (t0, max(t0, t1)))
            spans[run] = (min(lo, t0), max(hi, t1))
    return spans
