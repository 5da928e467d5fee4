"""Screenshots of the whole inspector on the golden programs, to look at as a teacher would.

Each program of ``placeviz.examples.documents`` (and the 4-layer training step, an MLP step
trained through 2 ps and 2 worker task processes, bench_cluster.py's MLP step on 2 ps and 2
CPU-only workers (its timeline: each task's ops, the tensors between tasks and the time each task
waited for them), and a training step of each model of
``placeviz.examples.zoo`` on 2 simulated GPUs) is written as a standalone page and
photographed in headless Debian chromium at 1,400 px wide, after its first
paint and the panels' plots. Not a test: the pictures are for eyes (README, docs/images).
Run: ``python3 benchmarks/screenshot_inspector.py [--out docs/images] [NAME ...]``; with
``--document PATH NAME`` it photographs a saved document (a real card's: record_card_trace.py).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _chromium import CHROMIUM, CHROMIUM_ARGS
from _cluster_graph import build, inputs
from playwright.sync_api import sync_playwright

import placeviz as pv
from placeviz.cluster.local import local_cluster, stop_local_clusters
from placeviz.events.html import write_html
from placeviz.examples import documents, will_it_fit, zoo
from placeviz.examples.documents import GOLDEN, training_step


def cluster_mlp(spec: pv.train.ClusterSpec) -> tuple[Any, Any, dict[Any, np.ndarray]]:
    """An MLP Adam step with its variables round robin on the ps tasks, its math on worker 0's
    first (simulated) GPU: its logits, its train op and a feed."""
    worker = "/job:worker/task:0"  # its ops go to the task's first GPU by default
    with pv.device(pv.train.replica_device_setter(cluster=spec, worker_device=worker)):
        x = pv.placeholder(pv.float32, [None, 64], name="x")
        y = pv.placeholder(pv.float32, [None, 10], name="y")
        h = x
        with pv.name_scope("mlp"):
            for i in range(3):
                units, activation = (10, None) if i == 2 else (128, pv.nn.relu)
                h = pv.layers.dense(h, units, activation=activation, name=f"dense_{i}")
        loss = pv.reduce_mean(pv.square(h - y), name="loss")
        step = pv.train.get_or_create_global_step()
        train = pv.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
    return h, train, {x: np.ones((32, 64), np.float32), y: np.zeros((32, 10), np.float32)}


def cluster_training_step() -> pv.Trace:
    """cluster_mlp's step on 2 ps and 2 worker tasks, each its own process."""
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    cluster = local_cluster(2, 2)  # ps tasks without GPUs, as the magic's
    try:
        _, train, feed = cluster_mlp(cluster.spec)
        with pv.Session(cluster.target) as sess:
            sess.run(pv.global_variables_initializer())
            sess.trace_level = pv.RunOptions.FULL_TRACE
            for _ in range(2):
                sess.run(train, feed)
            return sess.trace(runs=1)
    finally:
        stop_local_clusters()
        pv.config.reset_devices()


def cluster_failed_step() -> pv.Trace:
    """cluster_training_step's step, with a fetch on ps 0 that fails once the forward pass
    reaches it (the logits reshaped into rows of 7): the failed run keeps what every task ran
    until then."""
    pv.reset_default_graph()
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    cluster = local_cluster(2, 2)
    try:
        logits, train, feed = cluster_mlp(cluster.spec)
        with pv.device("/job:ps/task:0"):
            rows_of_7 = pv.reshape(logits, [-1, 7], name="rows_of_7")  # 320 values: fails
        with pv.Session(cluster.target) as sess:
            sess.run(pv.global_variables_initializer())
            try:
                sess.run([train, rows_of_7], feed)
            except pv.errors.InvalidArgumentError:
                return sess.trace(runs=1)
            raise AssertionError("rows_of_7 should have failed")
    finally:
        stop_local_clusters()
        pv.config.reset_devices()


def cluster_mlp_step() -> pv.Trace:
    """bench_cluster.py's MLP Adam step (784-256-256-10, batch 64) on 2 ps and 2 CPU-only
    workers, its second step: variables round robin on the ps tasks, the rest on worker 0."""
    widths, batch = [784, 256, 256, 10], 64
    pv.config.reset_devices()
    cpu_only = pv.ConfigProto(device_count={"GPU": 0})
    workers, ps = pv.test.create_local_cluster(2, 2, worker_config=cpu_only, ps_config=cpu_only)
    try:
        graph, x, y, train, init = build(pv, widths, batch, workers[0].cluster_spec)
        data, labels = inputs(widths, batch)
        with pv.Session(workers[0].target, graph=graph) as sess:
            sess.run(init)
            sess.trace_level = pv.RunOptions.FULL_TRACE
            for _ in range(2):
                sess.run(train, {x: data, y: labels})
            return sess.trace(runs=1)
    finally:
        for server in workers + ps:
            server.stop()


# The notebook's sizes (notebooks/08_real_models.ipynb): small enough to paint at once.
ZOO_SIZES: dict[str, dict[str, Any]] = {
    "cifar10": {"batch": 8},
    "resnet": {"batch": 8, "image": 16, "stages": (8, 16), "blocks_per_stage": 1},
    "bert": {"batch": 4, "seq": 16, "width": 32, "layers": 2, "vocab": 200, "dropout": 0.0},
    "gpt": {"batch": 4, "seq": 16, "width": 32, "layers": 4, "vocab": 200, "dropout": 0.0},
    # notebooks/09_model_parallel_rnn.ipynb's
    "lstm": {"batch": 16, "steps": 8, "width": 128, "vocab": 1000},
    "lstm_dynamic": {"batch": 16, "steps": 8, "width": 128, "vocab": 1000},
}


def zoo_step(name: str) -> Callable[[], pv.Trace]:
    """The zoo model's second training step, as its device scopes place it on 2 simulated GPUs."""

    def run() -> pv.Trace:
        pv.reset_default_graph()
        pv.config.reset_devices()
        pv.config.simulate_gpus(2)
        try:
            model = zoo.ZOO[name](pv, gpus=2, **ZOO_SIZES[name])
            # Soft placement, as TF needs for dynamic_rnn's loop over a layer per GPU: its
            # gradient loop's counters are colocated with both layers' ops.
            config = pv.ConfigProto(allow_soft_placement=True)
            with pv.Session(config=config) as sess:
                sess.run(pv.global_variables_initializer())
                sess.trace_level = pv.RunOptions.FULL_TRACE
                for _ in range(2):
                    sess.run([model.train_op, model.loss], model.feed)
                return sess.trace(runs=1)
        finally:
            pv.config.reset_devices()

    return run


PROGRAMS: dict[str, Callable[[], pv.Trace | dict[str, Any]]] = {
    **GOLDEN,
    "training-step": training_step,
    "training-step-noop": training_step,
    "training-step-folded": training_step,
    "cluster-training-step": cluster_training_step,
    "cluster-mlp-step": cluster_mlp_step,
    "cluster-failed-step": cluster_failed_step,
    **{f"zoo-{name}": zoo_step(name) for name in ZOO_SIZES},
    # Control flow (issue 26): a 2-layer LSTM LM under dynamic_rnn over 50 steps, a layer per
    # GPU; a cond whose last run took its false branch.
    "lstm-dynamic-50-steps": lambda: documents.lstm_dynamic(50),
    "lstm-dynamic-50-steps-body": lambda: documents.lstm_dynamic(50),
    "cond-branch-not-taken": documents.cond_branches,
    # Will it fit (issue 27): a BERT-large training step dry-run on 8 simulated H100s.
    "bert-large-dry-8-gpus": will_it_fit.bert_large_dry,
}


def select_op(name: str, zoom_out: int = 0, pan_down: int = 0) -> Callable[[Any], None]:
    """Find op ``name`` (the graph opens the scopes hiding it and centres it), click it, zoom
    out ``zoom_out`` wheel steps around it and drag the graph ``pan_down`` px down, so the
    scopes around it show with their titles."""

    def act(page: Any) -> None:
        dag = page.locator(".placeviz-dag-view")
        dag.locator(".placeviz-search").fill(name)
        dag.locator(".placeviz-search").press("Enter")
        page.wait_for_timeout(300)
        dag.locator(".placeviz-search").fill("")  # no filter: nothing drawn faint
        dag.locator(".placeviz-search").press("Enter")
        box = dag.locator("canvas").bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(zoom_out):
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.wheel(0, 150)
            page.wait_for_timeout(100)
        if pan_down:
            centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.move(*centre)
            page.mouse.down()
            page.mouse.move(centre[0], centre[1] + pan_down, steps=5)
            page.mouse.up()
        page.mouse.move(0, 0)
        page.wait_for_timeout(300)

    return act


def hover_wait(lane: str) -> Callable[[Any], None]:
    """Point at the longest wait on the timing lane whose label starts with ``lane``, so its
    tooltip (what the task waited for, what arrived last) is in the picture."""

    def act(page: Any) -> None:
        plot = page.locator(".placeviz-timing .placeviz-plot")
        plot.scroll_into_view_if_needed()  # the pointer reaches only what is in the viewport
        axes = plot.evaluate(
            """(el) => {
              const {xaxis, yaxis} = el._fullLayout;
              return {left: xaxis._offset, width: xaxis._length, top: yaxis._offset,
                      ticks: yaxis.ticktext, lanes: yaxis._length / yaxis.ticktext.length};
            }"""
        )
        row = next(i for i, text in enumerate(axes["ticks"]) if text.startswith(lane))
        box = plot.bounding_box()
        y = box["y"] + axes["top"] + (row + 0.5) * axes["lanes"]
        tooltip = page.locator(".placeviz-timing .placeviz-tooltip")
        longest: tuple[int, float] | None = None  # (px of it under the pointer, x)
        run = 0
        for px in range(0, int(axes["width"]), 4):
            x = box["x"] + axes["left"] + px
            page.mouse.move(x, y)
            waiting = tooltip.is_visible() and tooltip.inner_text().startswith("waiting")
            run = run + 4 if waiting else 0
            if waiting and (longest is None or run > longest[0]):
                longest = (run, x - run / 2)
        assert longest is not None, f"no wait drawn on {lane}'s lane"
        page.mouse.move(longest[1], y)
        page.wait_for_timeout(200)

    return act


# What is done on a page before it is photographed.
ACTIONS: dict[str, Callable[[Any], None]] = {
    "lstm-dynamic-50-steps-body": select_op(
        "rnn/while/rnn/multi_rnn_cell/cell_1/lstm_cell/MatMul", zoom_out=3, pan_down=180
    ),
    "cond-branch-not-taken": select_op("pick/first"),
    # The first layer's input gradient: nothing reads it, so it runs as a NoOp (as in TF).
    "training-step-noop": select_op("gradients/mlp/dense_0/MatMul_grad/MatMul"),
    # The loss's gradient seed, a Fill of constants: folded into a constant (as in TF).
    "training-step-folded": select_op("gradients/grad_ys_0"),
    "cluster-mlp-step": hover_wait("worker/0"),
}
PAINTED = '.placeviz-inspector[data-first-paint-ms]:not([data-first-paint-ms=""])'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", default=sorted(PROGRAMS))
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    parser.add_argument(
        "--document",
        type=Path,
        help="photograph this saved document (scripts/record_card_trace.py) as NAME instead",
    )
    args = parser.parse_args()
    if args.document is not None:
        saved = json.loads(args.document.read_text(encoding="utf-8"))
        PROGRAMS.clear()
        PROGRAMS[args.names[0]] = lambda: saved
    args.out.mkdir(parents=True, exist_ok=True)
    pages = Path(tempfile.mkdtemp(prefix="placeviz-shots-"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for name in args.names:
            html = pages / f"{name}.html"
            made = PROGRAMS[name]()
            write_html(made if isinstance(made, dict) else made.to_document(), html)
            page.goto(html.as_uri())
            page.wait_for_selector(PAINTED, state="attached")
            page.wait_for_selector(".placeviz-timing .main-svg", timeout=30_000)
            page.wait_for_timeout(500)  # the plots' second frame
            if name in ACTIONS:
                ACTIONS[name](page)
            own = ("zoo-", "lstm-dynamic-", "cond-", "bert-large-")  # named as they are
            stem = name if name.startswith(own) else f"inspector-{name}"
            shot = args.out / f"{stem}.png"
            page.locator(".placeviz-inspector").screenshot(path=str(shot))
            print(f"wrote {shot}")
        browser.close()


if __name__ == "__main__":
    main()
