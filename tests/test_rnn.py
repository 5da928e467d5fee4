"""RNN cells and static_rnn in placeviz: a layer per GPU (the model-parallel picture) and the
cells' behaviour that conformance (CPU only) cannot show."""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv

LOCAL = "/job:localhost/replica:0/task:0/device:"
cells = pv.nn.rnn_cell


def _lstm_layer_per_gpu(steps: int = 4, units: int = 8) -> tuple[list, pv.Tensor, pv.Operation]:
    """A two-layer LSTM language-model step: layer i's cell on /gpu:i, its loss on the CPU."""
    xs = [pv.placeholder(pv.float32, [4, 5], name=f"x{t}") for t in range(steps)]
    stack = cells.MultiRNNCell(
        [cells.DeviceWrapper(cells.BasicLSTMCell(units), f"/gpu:{i}") for i in range(2)]
    )
    with pv.variable_scope("lm", initializer=pv.random_uniform_initializer(-0.3, 0.3, seed=1)):
        outputs, _ = pv.nn.static_rnn(stack, xs, dtype=pv.float32)
    with pv.device("/cpu:0"):
        loss = pv.reduce_mean(pv.square(pv.add_n(outputs) - 1.0), name="loss")
    step = pv.train.AdamOptimizer(0.05).minimize(loss)
    return xs, loss, step


def test_lstm_with_a_layer_per_gpu_places_each_layer_on_its_gpu_and_trains() -> None:
    pv.config.simulate_gpus(2)
    xs, loss, step = _lstm_layer_per_gpu()
    feed = {x: np.full((4, 5), 0.1 * t, np.float32) for t, x in enumerate(xs)}
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        losses = [sess.run([loss, step], feed)[0] for _ in range(15)]
        placement = dict(sess.placement)
    for layer in range(2):
        prefix = f"lm/rnn/rnn/multi_rnn_cell/cell_{layer}/basic_lstm_cell/"
        ops = [name for name in placement if name.startswith(prefix)]
        assert len(ops) > 4 * 15  # every time step's gates
        assert {placement[name] for name in ops} == {f"{LOCAL}GPU:{layer}"}
        kernel = f"lm/rnn/multi_rnn_cell/cell_{layer}/basic_lstm_cell/kernel"
        assert placement[kernel] == placement[kernel + "/read"] == f"{LOCAL}GPU:{layer}"
    assert placement["loss"] == f"{LOCAL}CPU:0"
    assert losses[-1] < 0.5 * losses[0]


def test_the_cell_shares_its_variables_across_time_steps() -> None:
    cell = cells.GRUCell(3)
    xs = [pv.zeros([2, 4]) for _ in range(3)]
    outputs, state = pv.nn.static_rnn(cell, xs, dtype=pv.float32)
    names = [v.name for v in pv.global_variables()]
    assert names == [
        "rnn/gru_cell/gates/kernel:0",
        "rnn/gru_cell/gates/bias:0",
        "rnn/gru_cell/candidate/kernel:0",
        "rnn/gru_cell/candidate/bias:0",
    ]
    assert cell.trainable_weights == pv.trainable_variables()
    assert [o.shape.as_list() for o in outputs] == [[2, 3]] * 3 and state is outputs[-1]


def test_dropout_wrapper_keeps_an_lstm_memory_and_drops_its_output_state() -> None:
    cell = cells.DropoutWrapper(cells.BasicLSTMCell(3), state_keep_prob=0.5, seed=7)
    _, state = cell(pv.ones([2, 3]), cell.zero_state(2, pv.float32))
    assert state.c.op.type != "SelectV2"
    assert state.h.op.type == "SelectV2" and state.h.op.name.startswith("dropout/")


def test_unsupported_options_say_what_is_missing() -> None:
    with pytest.raises(NotImplementedError, match="ReverseSequence"):
        pv.nn.static_bidirectional_rnn(
            cells.GRUCell(2),
            cells.GRUCell(2),
            [pv.zeros([2, 2])],
            dtype=pv.float32,
            sequence_length=[1, 2],
        )
