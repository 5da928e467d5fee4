"""The programs behind the golden placement documents the front end's tests render.

Each builds a graph in a fresh default graph on simulated GPUs, runs it with full tracing and
returns the session's trace. ``scripts/write_golden_documents.py`` writes their documents under
``labextension/src/render/__tests__/golden/``; tests/test_golden_documents.py checks that what
Python writes today still has the committed documents' structure.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

import placeviz as pv
from placeviz.examples.towers import build_towers


def _fresh(gpus: int) -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus)
    pv.reset_default_graph()


def _traced() -> tuple[pv.RunOptions, pv.RunMetadata]:
    return pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE), pv.RunMetadata()


def _trained_with_adam(loss: pv.Tensor, feed: dict[pv.Tensor, np.ndarray]) -> pv.Trace:
    """The initializer run and 3 Adam steps minimizing ``loss``, fully traced."""
    train = pv.train.AdamOptimizer(0.01).minimize(loss)
    sess = pv.Session()
    options, metadata = _traced()
    sess.run(pv.global_variables_initializer(), options=options, run_metadata=metadata)
    for _ in range(3):
        sess.run(train, feed_dict=feed, options=options, run_metadata=metadata)
    return sess.trace(runs=None)


def towers() -> pv.Trace:
    """The seeds' towers: a matmul on GPU:2 and one on GPU:3, summed on the CPU."""
    _fresh(4)
    total = build_towers()
    sess = pv.Session()
    options, metadata = _traced()
    sess.run(total, options=options, run_metadata=metadata)
    return sess.trace(runs=None)


def mlp_training() -> pv.Trace:
    """A 2-layer MLP, one layer per GPU, trained three steps with Adam after its initializer."""
    _fresh(2)
    x = pv.placeholder(pv.float32, [None, 8], name="x")
    y = pv.placeholder(pv.float32, [None, 2], name="y")
    with pv.device("/gpu:0"):
        hidden = pv.layers.dense(x, 16, activation=pv.nn.relu, name="layer1")
    with pv.device("/gpu:1"):
        out = pv.layers.dense(hidden, 2, name="layer2")
        loss = pv.reduce_mean(pv.square(out - y), name="loss")
    feed = {x: np.ones((4, 8), np.float32), y: np.zeros((4, 2), np.float32)}
    return _trained_with_adam(loss, feed)


def training_step() -> pv.Trace:
    """A 4-layer MLP (``mlp/dense_0..3``; layers 0-1 on GPU:0, 2-3 on GPU:1) trained with Adam:
    the initializer run and 3 steps."""
    _fresh(2)
    x = pv.placeholder(pv.float32, [None, 64], name="x")
    y = pv.placeholder(pv.float32, [None, 10], name="y")
    h = x
    with pv.name_scope("mlp"):
        for i in range(4):
            last = i == 3
            with pv.device(f"/gpu:{i // 2}"):
                units, activation = (10, None) if last else (128, pv.nn.relu)
                h = pv.layers.dense(h, units, activation=activation, name=f"dense_{i}")
    with pv.device("/gpu:1"):
        loss = pv.reduce_mean(pv.square(h - y), name="loss")
    feed = {x: np.ones((32, 64), np.float32), y: np.zeros((32, 10), np.float32)}
    return _trained_with_adam(loss, feed)


def failed_placement() -> pv.Trace:
    """An op pinned to a GPU the session lacks (no soft placement), and a run that fails in a
    kernel (a reshape fed the wrong size) after one that succeeded."""
    _fresh(2)
    flat = pv.placeholder(pv.float32, [None], name="flat")
    square = pv.reshape(flat, [2, 2], name="square")
    with pv.device("/gpu:7"):
        missing = pv.identity(square, name="on_missing_gpu")
    sess = pv.Session()
    options, metadata = _traced()
    sess.run(square, {flat: np.ones(4, np.float32)}, options=options, run_metadata=metadata)
    for fetch, feed in ((square, np.ones(3, np.float32)), (missing, np.ones(4, np.float32))):
        # The document keeps the failed run and the op that could not be placed.
        with contextlib.suppress(pv.errors.OpError):
            sess.run(fetch, {flat: feed}, options=options, run_metadata=metadata)
    return sess.trace(runs=None)


def scoped_chain(blocks: int = 100) -> pv.Tensor:
    """An input and ``blocks`` name scopes of 30 small ops each, chained (3,001 ops for 100
    blocks), in the default graph; the chain's end."""
    h = pv.constant(np.ones((4, 4), np.float32), name="input")
    for i in range(blocks):
        with pv.name_scope(f"block{i}"):
            w = pv.constant(np.eye(4, dtype=np.float32), name="w")
            b = pv.constant(0.1, name="b")
            for _ in range(9):
                h = pv.nn.relu(pv.matmul(h, w) + b)
            h = pv.identity(h)
    return h


def scoped_graph(blocks: int = 100) -> pv.Trace:
    """``scoped_chain`` run once on two GPUs."""
    _fresh(2)
    h = scoped_chain(blocks)
    sess = pv.Session()
    options, metadata = _traced()
    sess.run(h, options=options, run_metadata=metadata)
    return sess.trace(runs=None)


def loop(runs: int = 200) -> pv.Trace:
    """A training-loop shape: ``runs`` runs of a small graph on two GPUs."""
    _fresh(2)
    with pv.device("/gpu:0"):
        a = pv.constant(np.ones((8, 8), np.float32), name="a")
        b = pv.matmul(a, a, name="square")
    with pv.device("/gpu:1"):
        c = pv.reduce_sum(b, name="total")
    sess = pv.Session()
    options, metadata = _traced()
    for _ in range(runs):
        sess.run(c, options=options, run_metadata=metadata)
    return sess.trace(runs=None)


def lstm_dynamic(steps: int = 5, runs: int = 1) -> pv.Trace:
    """A 2-layer LSTM language model under ``dynamic_rnn`` over ``steps`` time steps, one layer
    per GPU (DeviceWrapper), its embedding and softmax on the CPU: ``runs`` forward runs."""
    _fresh(2)
    vocab, width, batch = 50, 32, 4
    words = pv.placeholder(pv.int32, [batch, steps], name="words")
    with pv.device("/cpu:0"):
        embedding = pv.get_variable("embedding", [vocab, width])
        inputs = pv.nn.embedding_lookup(embedding, words)
    cells = [
        pv.nn.rnn_cell.DeviceWrapper(pv.nn.rnn_cell.LSTMCell(width), f"/gpu:{layer}")
        for layer in range(2)
    ]
    outputs, _ = pv.nn.dynamic_rnn(
        pv.nn.rnn_cell.MultiRNNCell(cells), inputs, dtype=pv.float32, scope="rnn"
    )
    with pv.device("/cpu:0"):
        logits = pv.layers.dense(pv.reshape(outputs, [-1, width]), vocab, name="softmax")
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    options, metadata = _traced()
    feed = {words: np.random.default_rng(0).integers(0, vocab, (batch, steps))}
    for _ in range(runs):
        sess.run(logits, feed_dict=feed, options=options, run_metadata=metadata)
    return sess.trace(runs=runs)


def cond_branches() -> pv.Trace:
    """``pv.cond`` with a branch per GPU, run once each way: the selected (last) run took the
    false branch, so the true branch's ops are not executed in it."""
    _fresh(2)
    x = pv.placeholder(pv.float32, [64, 64], name="x")
    use_first = pv.placeholder(pv.bool, [], name="use_first")

    def on(device: str, name: str) -> Callable[[], pv.Tensor]:
        def branch() -> pv.Tensor:
            with pv.device(device):
                return pv.reduce_sum(pv.matmul(x, x), name=name)

        return branch

    result = pv.cond(use_first, on("/gpu:0", "first"), on("/gpu:1", "second"), name="pick")
    sess = pv.Session()
    options, metadata = _traced()
    value = np.ones((64, 64), np.float32)
    for flag in (True, False):
        sess.run(result, {x: value, use_first: flag}, options=options, run_metadata=metadata)
    return sess.trace(runs=None)


GOLDEN: dict[str, Callable[[], pv.Trace]] = {
    "towers": towers,
    "mlp-training": mlp_training,
    "failed-placement": failed_placement,
    "scoped-3001": scoped_graph,
    "loop-200": loop,
    "lstm-dynamic": lstm_dynamic,
    "cond": cond_branches,
}

# Where the documents are committed: beside the front end's tests, which read them from there.
GOLDEN_FOLDER = (
    Path(__file__).resolve().parents[2] / "labextension" / "src" / "render" / "__tests__" / "golden"
)
