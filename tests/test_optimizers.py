"""Optimizers: TF1's update rules step by step against NumPy, slots, placement, global step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz.graph.ops import training_ops

LOCAL = "/job:localhost/replica:0/task:0/device:"


def quadratic(target: list[float]) -> tuple[pv.Variable, pv.Tensor, np.ndarray]:
    """loss = sum((w - target)^2 * scale): its gradient is 2 * scale * (w - target)."""
    w = pv.Variable([1.0, -2.0, 0.5], name="w")
    scale = np.array([1.0, 3.0, 0.5], np.float32)
    loss = pv.reduce_sum(pv.square(w - target) * scale)
    return w, loss, scale


def grad_of(w: np.ndarray, target: list[float], scale: np.ndarray) -> np.ndarray:
    return 2 * scale * (w - np.array(target, np.float32))


def run_steps(train: pv.Operation, w: pv.Variable, steps: int) -> list[np.ndarray]:
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    values = []
    for _ in range(steps):
        sess.run(train)
        values.append(sess.run(w))
    return values


def test_gradient_descent_follows_var_minus_lr_grad() -> None:
    target = [0.0, 1.0, 2.0]
    w, loss, scale = quadratic(target)
    train = pv.train.GradientDescentOptimizer(0.1).minimize(loss)
    expected = np.array([1.0, -2.0, 0.5], np.float32)
    for got in run_steps(train, w, 5):
        expected = expected - np.float32(0.1) * grad_of(expected, target, scale)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert train.name == "GradientDescent"
    assert [op.name for op in train.control_inputs] == [
        "GradientDescent/update_w/ApplyGradientDescent"
    ]


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_keeps_an_accumulator_slot(nesterov: bool) -> None:
    target = [0.5, 0.5, 0.5]
    w, loss, scale = quadratic(target)
    opt = pv.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov)
    train = opt.minimize(loss)
    value, accum = np.array([1.0, -2.0, 0.5], np.float32), np.zeros(3, np.float32)
    for got in run_steps(train, w, 6):
        grad = grad_of(value, target, scale)
        accum = accum * np.float32(0.9) + grad
        step = (grad + np.float32(0.9) * accum) if nesterov else accum
        value = value - np.float32(0.05) * step
        np.testing.assert_allclose(got, value, rtol=1e-5)
    assert opt.get_slot(w, "momentum").name == "w/Momentum:0"


def test_adam_uses_tf1_bias_correction_and_beta_powers() -> None:
    target = [0.0, 0.0, 0.0]
    w, loss, scale = quadratic(target)
    opt = pv.train.AdamOptimizer(0.1)
    train = opt.minimize(loss)
    value = np.array([1.0, -2.0, 0.5], np.float64)
    m = np.zeros(3)
    v = np.zeros(3)
    for t, got in enumerate(run_steps(train, w, 8), start=1):
        g = grad_of(value, target, scale)
        lr_t = 0.1 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        value = value - lr_t * m / (np.sqrt(v) + 1e-8)
        np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-5)  # float32 vs float64
    names = sorted(v.op.name for v in pv.global_variables())
    assert names == ["beta1_power", "beta2_power", "w", "w/Adam", "w/Adam_1"]
    assert [v.op.name for v in pv.trainable_variables()] == ["w"]


def _updates(kind: str) -> tuple[pv.train.Optimizer, Any]:
    """An optimizer, and its TF1 update in float32 over whole arrays: one step from
    (var, slots) with gradient g, returning the new (var, slots)."""
    f = np.float32
    if kind == "sgd":
        return pv.train.GradientDescentOptimizer(0.1), lambda w, s, g, t: (w - f(0.1) * g, s)
    if kind.startswith("momentum"):
        nesterov = kind.endswith("nesterov")

        def momentum(w: Any, s: Any, g: Any, t: int) -> Any:
            a = s[0] * f(0.9) + g
            return w - f(0.05) * ((g + f(0.9) * a) if nesterov else a), [a]

        return pv.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov), momentum

    def adam(w: Any, s: Any, g: Any, t: int) -> Any:
        m, v = s
        lr_t = f(0.1) * np.sqrt(f(1) - f(0.999) ** t) / (f(1) - f(0.9) ** t)
        m = m + (g - m) * (f(1) - f(0.9))
        v = v + (g * g - v) * (f(1) - f(0.999))
        return w - lr_t * m / (np.sqrt(v) + f(1e-8)), [m, v]

    return pv.train.AdamOptimizer(0.1), adam


@pytest.mark.parametrize("kind", ["sgd", "momentum", "momentum-nesterov", "adam"])
def test_updates_of_a_variable_many_blocks_long_reach_every_element(kind: str) -> None:
    """The CPU kernels update a large variable a block at a time (training_ops._BLOCK); every
    element, the last partial block's too, gets the whole-array update."""
    size = 2 * training_ops._BLOCK + 3
    rng = np.random.default_rng(1)
    start = rng.standard_normal(size).astype(np.float32)
    w = pv.Variable(start, name="w")
    g = pv.placeholder(pv.float32, [size])
    opt, update = _updates(kind)
    train = opt.apply_gradients([(g, w)])
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    value, slots = start, [np.zeros(size, np.float32)] * (2 if kind == "adam" else 1)
    for t in range(1, 4):
        grad = rng.standard_normal(size).astype(np.float32)
        sess.run(train, {g: grad})
        value, slots = update(value, slots, grad, t)
        np.testing.assert_allclose(sess.run(w), value, rtol=1e-5, atol=1e-6)


def test_slots_and_updates_live_with_their_variable(gpus4: None) -> None:
    with pv.device("/gpu:2"):
        w = pv.Variable([1.0, 2.0], name="w")
    with pv.device("/cpu:0"):
        b = pv.Variable(0.5, name="b")
    loss = pv.reduce_sum(pv.square(w * b))
    opt = pv.train.AdamOptimizer()
    train = opt.minimize(loss)
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    sess.run(train)
    placed = sess.placement
    for name in ("w", "w/Adam", "w/Adam_1", "Adam/update_w/ApplyAdam"):
        assert placed[name] == f"{LOCAL}GPU:2", name
    for name in ("b", "b/Adam", "b/Adam_1", "Adam/update_b/ApplyAdam", "beta1_power"):
        assert placed[name] == f"{LOCAL}CPU:0", name  # beta powers go with the first variable
    assert placed.explain("w/Adam").kind == "colocated"


def test_global_step_counts_training_steps() -> None:
    _, loss, _ = quadratic([0.0, 0.0, 0.0])
    step = pv.train.get_or_create_global_step()
    assert pv.train.get_or_create_global_step() is step
    assert step.op.name == "global_step" and step.dtype == pv.int64_ref
    train = pv.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
    assert train.type == "AssignAdd" and train.name == "GradientDescent"
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    assert sess.run(step) == 3
    assert step not in pv.trainable_variables()


def test_compute_and_apply_gradients_skip_unrelated_variables() -> None:
    w, loss, scale = quadratic([0.0, 0.0, 0.0])
    unrelated = pv.Variable(7.0, name="unrelated")
    opt = pv.train.GradientDescentOptimizer(0.5)
    pairs = opt.compute_gradients(loss)
    assert [(g is None, v) for g, v in pairs] == [(False, w), (True, unrelated)]
    train = opt.apply_gradients(pairs)
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    sess.run(train)
    w_value, unrelated_value = sess.run([w, unrelated])
    start = np.array([1.0, -2.0, 0.5], np.float32)
    expected = start - 0.5 * grad_of(start, [0.0, 0.0, 0.0], scale)
    np.testing.assert_allclose(w_value, expected, rtol=1e-6)
    assert unrelated_value == 7.0
    names = [op.name for op in pv.get_default_graph().get_operations()]
    assert not any("update_unrelated" in name for name in names)


def test_no_gradients_and_no_variables_are_value_errors() -> None:
    v = pv.Variable(1.0, name="v")
    loss = pv.constant(2.0) * 3.0
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        pv.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[v])
    with pv.Graph().as_default(), pytest.raises(ValueError, match="No variables to optimize"):
        pv.train.GradientDescentOptimizer(0.1).minimize(pv.constant(1.0) * 2.0)


def test_integer_losses_are_rejected() -> None:
    v = pv.Variable(1, name="count")
    with pytest.raises(ValueError, match="Invalid type int32"):
        pv.train.GradientDescentOptimizer(0.1).minimize(v * 2)
