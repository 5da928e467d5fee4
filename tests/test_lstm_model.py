"""The zoo's LSTM language model a layer per GPU (``placeviz.examples.zoo.lstm_lm``) and
variational dropout: what conformance (CPU only, random draws not reproduced) cannot show.
Where each part lands on simulated GPUs, the layers overlapping on the modeled timeline, and the
one mask a variational ``DropoutWrapper`` keeps for every step."""

from __future__ import annotations

import re

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples import zoo

LOCAL = "/job:localhost/replica:0/task:0/device:"
SMALL = {"batch": 4, "steps": 5, "width": 16, "vocab": 50}
CELL_OP = re.compile(r"lm/rnn/rnn/multi_rnn_cell/cell_(\d)/basic_lstm_cell/(\w+?)(?:_(\d+))?$")


def _trained(layers: int, gpus: int, runs: int = 5, **sizes: object) -> tuple[list, pv.Session]:
    model = zoo.lstm_lm(pv, gpus=gpus, layers=layers, **{**SMALL, **sizes})
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    losses = [sess.run([model.train_op, model.loss], model.feed)[1] for _ in range(runs)]
    return losses, sess


@pytest.mark.parametrize("layers", [2, 4])
def test_each_layer_runs_on_its_own_gpu_and_the_embedding_on_the_cpu(layers: int) -> None:
    pv.config.simulate_gpus(layers)
    losses, sess = _trained(layers, gpus=layers)
    placement = dict(sess.placement)
    for layer in range(layers):
        gates = [n for n in placement if (m := CELL_OP.match(n)) and m.group(1) == str(layer)]
        assert len(gates) > 10 * SMALL["steps"]
        assert {placement[n] for n in gates} == {f"{LOCAL}GPU:{layer}"}
        kernel = f"lm/rnn/multi_rnn_cell/cell_{layer}/basic_lstm_cell/kernel"
        assert placement[kernel] == f"{LOCAL}GPU:{layer}"
    assert placement["lm/embedding"] == placement["lm/embedding_lookup"] == f"{LOCAL}CPU:0"
    assert placement["lm/softmax/MatMul"] == f"{LOCAL}GPU:{layers - 1}"
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_unpinned_the_simple_placer_puts_every_layer_on_gpu_0() -> None:
    pv.config.simulate_gpus(2)
    _, sess = _trained(2, gpus=2, runs=1, pin=False)
    placement = dict(sess.placement)
    gates = {placement[n] for n in placement if CELL_OP.match(n)}
    assert gates == {f"{LOCAL}GPU:0"}
    assert placement["lm/embedding_lookup"] == f"{LOCAL}CPU:0"  # with its table


def _forward_spans(trace: pv.Trace) -> dict[tuple[int, int], tuple[float, float]]:
    """Each (layer, time step)'s forward span on the timeline: its first gate op's start to its
    last's end (a cell's ops at step t are its MatMul_t, Sigmoid_{3t}..., so the MatMul's index
    names the step and the spans run from one MatMul to the next)."""
    events = trace.events
    matmuls: dict[tuple[int, int], tuple[float, float]] = {}
    for kind, node, t0, t1 in zip(events["kind"], events["node"], events["t0"], events["t1"]):
        match = CELL_OP.match(trace.node_name(int(node)))
        if kind == EventKind.OP and match and match.group(2) == "MatMul":
            matmuls[(int(match.group(1)), int(match.group(3) or 0))] = (float(t0), float(t1))
    return matmuls


def test_the_timeline_shows_layer_1_at_step_t_while_layer_0_is_at_step_t_plus_1() -> None:
    """The wavefront of a layer-per-GPU LSTM: GPU:1 starts step t as soon as layer 0's output
    for t crosses, while GPU:0 goes on with t + 1. Simulated GPUs, so the times are modeled."""
    pv.config.simulate_gpus(2)
    model = zoo.lstm_lm(pv, gpus=2, **SMALL)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        sess.trace_level = pv.RunOptions.FULL_TRACE
        for _ in range(2):
            sess.run([model.train_op, model.loss], model.feed)
        trace = sess.trace(runs=1)
    spans = _forward_spans(trace)
    steps = SMALL["steps"]
    assert set(spans) == {(layer, t) for layer in range(2) for t in range(steps)}
    for t in range(steps - 1):
        layer1_starts = spans[(1, t)][0]
        # layer 0's step t + 1 runs from its MatMul to its step t + 2's MatMul (or the end)
        layer0_next = (spans[(0, t + 1)][0], spans.get((0, t + 2), (np.inf,))[0])
        assert spans[(0, t)][1] <= layer1_starts  # layer 1 needs layer 0's output of step t
        assert layer0_next[0] < layer1_starts < layer0_next[1]


# -- variational dropout -------------------------------------------------------------------


def _steps(n: int, depth: int = 3) -> list[pv.Tensor]:
    return [pv.constant(np.full((4, depth), 0.3 * (t + 1), np.float32)) for t in range(n)]


def test_variational_dropout_zeroes_the_same_units_at_every_step_and_row() -> None:
    cell = pv.nn.rnn_cell.DropoutWrapper(
        pv.nn.rnn_cell.BasicRNNCell(64),
        output_keep_prob=0.5,
        variational_recurrent=True,
        dtype=pv.float32,
        seed=1,
    )
    outputs, _ = pv.nn.static_rnn(cell, _steps(4), dtype=pv.float32)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        values = sess.run(outputs)
    masks = [v == 0 for v in values]
    assert 0 < masks[0][0].sum() < 64  # some units dropped, some kept
    for mask in masks:
        assert (mask == masks[0][0]).all()


def test_ordinary_dropout_draws_a_fresh_mask_per_step() -> None:
    """The contrast that makes the test above able to fail. No seed: with one, every step's
    dropout op has the same seed pair and so, in TensorFlow as here, the same mask."""
    cell = pv.nn.rnn_cell.DropoutWrapper(pv.nn.rnn_cell.BasicRNNCell(64), output_keep_prob=0.5)
    outputs, _ = pv.nn.static_rnn(cell, _steps(4), dtype=pv.float32)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        values = sess.run(outputs)
    assert any(((v == 0) != (values[0] == 0)).any() for v in values[1:])


def test_variational_noise_is_drawn_where_the_wrapper_is_built() -> None:
    """Built under a GPU's scope, a layer's noise lives on that GPU, beside the layer."""
    pv.config.simulate_gpus(2)
    model = zoo.lstm_lm(pv, gpus=2, keep_prob=0.5, **SMALL)
    graph = pv.get_default_graph()
    ops = graph.get_operations()
    draws = [op for op in ops if op.type == "RandomUniform" and "Initializer" not in op.name]
    # per layer, as TensorFlow's: noise for the state's c and h (drawn even when the state is
    # kept) and for the output
    expected = ["GPU:0"] * 3 + ["GPU:1"] * 3
    assert [op.device for op in draws] == [f"/device:{d}" for d in expected]
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        sess.run(model.train_op, model.feed)
        assert [sess.placement[op.name] for op in draws] == [LOCAL + d for d in expected]


def test_variational_dropout_asks_for_what_it_needs() -> None:
    cells = pv.nn.rnn_cell
    with pytest.raises(ValueError, match="dtype must be provided"):
        cells.DropoutWrapper(cells.GRUCell(2), output_keep_prob=0.5, variational_recurrent=True)
    with pytest.raises(ValueError, match="input_size must be provided"):
        cells.DropoutWrapper(
            cells.GRUCell(2), input_keep_prob=0.5, variational_recurrent=True, dtype=pv.float32
        )
