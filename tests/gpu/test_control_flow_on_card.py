"""Control flow on a real card: conds and while loops whose ops run on CuPy, on logical GPUs.

A loop is one step of its plan that a FrameRunner runs iteration by iteration; on a card its
ops' kernels run on the loop's stream, its LoopCond read back each iteration. Each test runs the
same program on the card's logical GPUs and on the CPU (no GPUs) and compares values, and checks
that the card's trace says which ops ran where, in which iteration, and which did not run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu.test_cuda_runtime import carve, grow, rows, traced

import placeviz as pv
from placeviz.contract import EventKind

pytestmark = pytest.mark.gpu

Program = Callable[[], tuple[list[Any], dict[Any, Any]]]


def both(program: Program, gpus: int, steps: int = 1) -> tuple[list[Any], list[Any], pv.Trace]:
    """``program``'s fetched values on ``gpus`` logical GPUs of the card and on the CPU alone,
    ``steps`` runs each (the last run's values), from the same variables, and the card's last
    trace."""

    def run(real: bool) -> tuple[list[Any], pv.Trace | None]:
        pv.config.reset_devices()
        pv.reset_default_graph()
        if real:
            carve(gpus)
        else:
            pv.config.simulate_gpus(0)
        fetches, feed = program()
        # The same starting values both times: CuPy's random draws are not NumPy's.
        rng = np.random.default_rng(3)
        start = pv.group(
            *[
                v.assign(rng.uniform(-0.1, 0.1, v.shape.as_list()).astype(np.float32))
                for v in pv.global_variables()
            ]
        )
        options, metadata = traced()
        config = grow()
        config.allow_soft_placement = True
        with pv.Session(config=config) as sess:
            sess.run(pv.global_variables_initializer())
            sess.run(start)
            for _ in range(steps):
                values = sess.run(fetches, feed, options=options, run_metadata=metadata)
            if real:
                kinds = {d.kind for d in sess.devices if d.device_type == "GPU"}
                assert kinds and "simulated" not in kinds  # the card itself, or carved from it
        return values, metadata.trace if real else None

    on_card, trace = run(True)
    on_cpu, _ = run(False)
    assert trace is not None
    return on_card, on_cpu, trace


def assert_close(got: list[Any], want: list[Any], rtol: float = 1e-4) -> None:
    """Equal up to float32 rounding, which differs between cuBLAS's sums and OpenBLAS's: an
    entry near zero of a product whose entries reach 100 may differ by 1e-5 of 100."""
    for g, w in zip(got, want):
        if g is None:
            continue
        scale = float(np.abs(np.asarray(w)).max(initial=1.0))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-5 * scale)


def devices_of(trace: pv.Trace, kind: EventKind, prefix: str) -> set[str]:
    found = rows(trace, kind)
    return {r["device"].rsplit("/", 1)[-1] for r in found if r["node"].startswith(prefix)}


def test_a_cond_runs_the_taken_branch_on_its_gpu_and_records_the_other_as_not_run() -> None:
    def program() -> tuple[list[Any], dict[Any, Any]]:
        x = pv.placeholder(pv.float32, [256, 256], name="x")
        flag = pv.placeholder(pv.bool, [], name="flag")
        with pv.device("/gpu:0"):
            w = pv.get_variable("w", [256, 256], initializer=pv.random_normal_initializer(0, 0.05))

        def taken() -> pv.Tensor:
            with pv.device("/gpu:1"):
                return pv.matmul(x, w, name="heavy")

        def other() -> pv.Tensor:
            with pv.device("/gpu:0"):
                return pv.tanh(x, name="light")

        y = pv.cond(flag, taken, other, name="pick")
        loss = pv.reduce_sum(y * y)
        (grad,) = pv.gradients(loss, [w])
        feed = {x: np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)}
        return [y, loss, grad], {**feed, flag: True}

    on_card, on_cpu, trace = both(program, gpus=2)
    assert_close(on_card, on_cpu)
    heavy = [r["device"] for r in rows(trace, EventKind.OP) if r["node"] == "pick/heavy"]
    assert len(heavy) == 1 and heavy[0].endswith("device:GPU:1")
    assert not [r for r in rows(trace, EventKind.OP) if r["node"] == "pick/light"]
    assert [r for r in rows(trace, EventKind.NOT_RUN) if r["node"] == "pick/light"]


def test_a_while_loop_on_the_card_runs_every_iteration_with_the_cpus_values() -> None:
    def program() -> tuple[list[Any], dict[Any, Any]]:
        x = pv.placeholder(pv.float32, [128, 128], name="x")
        with pv.device("/gpu:0"):
            w = pv.get_variable("w", [128, 128], initializer=pv.random_normal_initializer(0, 0.08))
            _, y = pv.while_loop(
                lambda i, v: i < 7,
                lambda i, v: (i + 1, pv.tanh(pv.matmul(v, w))),
                [pv.constant(0), x],
                name="loop",
            )
        loss = pv.reduce_sum(y)
        (grad,) = pv.gradients(loss, [w])
        feed = {x: np.random.default_rng(2).standard_normal((128, 128)).astype(np.float32)}
        return [y, loss, grad], feed

    on_card, on_cpu, trace = both(program, gpus=1)
    assert_close(on_card, on_cpu)
    matmuls = [r for r in rows(trace, EventKind.OP) if r["node"].endswith("loop/MatMul")]
    assert len(matmuls) == 7
    assert {r["device"].rsplit("/", 1)[-1] for r in matmuls} == {"device:GPU:0"}
    events = trace.events
    iterations = sorted(
        int(events["iteration"][i])
        for i in np.flatnonzero(events["kind"] == int(EventKind.OP))
        if trace.nodes[int(events["node"][i])]["name"].endswith("loop/MatMul")
    )
    assert iterations == list(range(7))


def test_a_dynamic_rnn_lstm_a_layer_per_logical_gpu_trains_as_on_the_cpu() -> None:
    """The model-parallel LSTM of issue 26: dynamic_rnn over 12 steps, a layer per logical GPU
    of the card, three steps of gradient descent; losses and the last gradients as the CPU's."""

    def program() -> tuple[list[Any], dict[Any, Any]]:
        batch, steps, width = 16, 12, 64
        inputs = pv.placeholder(pv.float32, [batch, steps, width], name="inputs")
        init = pv.random_uniform_initializer(-0.1, 0.1)
        with pv.variable_scope("lm", initializer=init):
            cells = [
                pv.nn.rnn_cell.DeviceWrapper(pv.nn.rnn_cell.BasicLSTMCell(width), f"/gpu:{k}")
                for k in range(2)
            ]
            outputs, _ = pv.nn.dynamic_rnn(
                pv.nn.rnn_cell.MultiRNNCell(cells), inputs, dtype=pv.float32
            )
            loss = pv.reduce_mean(pv.square(outputs), name="loss")
        optimizer = pv.train.GradientDescentOptimizer(0.5)
        grads_and_vars = optimizer.compute_gradients(loss, colocate_gradients_with_ops=True)
        train = optimizer.apply_gradients(grads_and_vars)
        feed = {inputs: np.random.default_rng(4).standard_normal((batch, steps, width))}
        return [loss, train, *(g for g, _ in grads_and_vars)], {
            k: v.astype(np.float32) for k, v in feed.items()
        }

    on_card, on_cpu, trace = both(program, gpus=2, steps=3)
    assert_close(on_card, on_cpu, rtol=2e-3)
    layer_devices = {
        layer: devices_of(trace, EventKind.OP, f"lm/rnn/while/rnn/multi_rnn_cell/cell_{layer}/")
        for layer in range(2)
    }
    assert layer_devices == {0: {"device:GPU:0"}, 1: {"device:GPU:1"}}
    # Layer 0's output crosses to GPU:1 once per step, copied on the card (its bytes measured)
    copies = [
        r
        for r in rows(trace, EventKind.TRANSFER)
        if r["node"] == "lm/rnn/while/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/Mul_2"
    ]
    assert len(copies) == 12
    assert {(r["peer"][-5:], r["device"][-5:], r["bytes"]) for r in copies} == {
        ("GPU:0", "GPU:1", 16 * 64 * 4)
    }
