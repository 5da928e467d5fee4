"""RMSProp, Adagrad, Adadelta, the learning-rate schedules, clipping and moving averages against
NumPy references of their update rules, written here from the formulas in TF's documentation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import placeviz as pv

LOCAL = "/job:localhost/replica:0/task:0/device:"
START = np.array([1.0, -2.0, 0.5])
SCALE = np.array([3.0, 4.0, 1.0])

# -- NumPy references: (state, grad) -> new state; state["w"] is the variable -----------------


def as_float32(*values: float) -> list[float]:
    """Hyperparameters as the optimizers hold them: float32 constants, cast to the variable's
    dtype (so a float64 variable steps with 0.1f, not 0.1)."""
    return [float(np.float32(v)) for v in values]


def rmsprop(lr: float, decay: float, momentum: float, epsilon: float, centered: bool) -> Callable:
    lr, decay, momentum, epsilon = as_float32(lr, decay, momentum, epsilon)

    def step(s: dict, g: np.ndarray) -> dict:
        ms = decay * s["rms"] + (1 - decay) * g * g
        mg = decay * s["mg"] + (1 - decay) * g if centered else s["mg"]
        denominator = ms - mg * mg if centered else ms
        mom = momentum * s["momentum"] + lr * g / np.sqrt(denominator + epsilon)
        return {"w": s["w"] - mom, "rms": ms, "mg": mg, "momentum": mom}

    return step


def adagrad(lr: float) -> Callable:
    (lr,) = as_float32(lr)

    def step(s: dict, g: np.ndarray) -> dict:
        accum = s["accumulator"] + g * g
        return {"w": s["w"] - lr * g / np.sqrt(accum), "accumulator": accum}

    return step


def adadelta(lr: float, rho: float, epsilon: float) -> Callable:
    lr, rho, epsilon = as_float32(lr, rho, epsilon)

    def step(s: dict, g: np.ndarray) -> dict:
        accum = rho * s["accum"] + (1 - rho) * g * g
        update = np.sqrt(s["accum_update"] + epsilon) / np.sqrt(accum + epsilon) * g
        accum_update = rho * s["accum_update"] + (1 - rho) * update * update
        return {"w": s["w"] - lr * update, "accum": accum, "accum_update": accum_update}

    return step


CASES = {
    "rmsprop": (
        lambda: pv.train.RMSPropOptimizer(0.1),
        rmsprop(0.1, 0.9, 0.0, 1e-10, False),
        {"rms": 1.0, "mg": 0.0, "momentum": 0.0},
    ),
    "rmsprop_momentum": (
        lambda: pv.train.RMSPropOptimizer(0.05, decay=0.8, momentum=0.5, epsilon=1e-3),
        rmsprop(0.05, 0.8, 0.5, 1e-3, False),
        {"rms": 1.0, "mg": 0.0, "momentum": 0.0},
    ),
    "rmsprop_centered": (
        lambda: pv.train.RMSPropOptimizer(0.05, momentum=0.3, centered=True),
        rmsprop(0.05, 0.9, 0.3, 1e-10, True),
        {"rms": 1.0, "mg": 0.0, "momentum": 0.0},
    ),
    "adagrad": (
        lambda: pv.train.AdagradOptimizer(0.5, initial_accumulator_value=0.3),
        adagrad(0.5),
        {"accumulator": 0.3},
    ),
    "adadelta": (
        lambda: pv.train.AdadeltaOptimizer(5.0, rho=0.8, epsilon=1e-4),
        adadelta(5.0, 0.8, 1e-4),
        {"accum": 0.0, "accum_update": 0.0},
    ),
}


def _quadratic(dtype: pv.DType) -> tuple[pv.Variable, pv.Tensor]:
    """``sum(w * w * scale)``: its gradient ``2 w scale`` changes every step."""
    w = pv.Variable(START.astype(dtype.np), name="w")
    return w, pv.reduce_sum(w * w * SCALE.astype(dtype.np), name="loss")


@pytest.mark.parametrize("dtype", [pv.float32, pv.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_update_rule_and_slots_follow_numpy_over_steps(case: str, dtype: pv.DType) -> None:
    make, reference, slots = CASES[case]
    w, loss = _quadratic(dtype)
    opt = make()
    train = opt.minimize(loss)
    state = {"w": START} | {name: np.full(3, value) for name, value in slots.items()}
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    rtol = 1e-5 if dtype is pv.float32 else 1e-12
    for _ in range(4):
        sess.run(train)
        state = reference(state, 2 * state["w"] * SCALE)
        np.testing.assert_allclose(sess.run(w), state["w"], rtol=rtol)
        for name in opt.get_slot_names():
            slot = sess.run(opt.get_slot(w, name))
            assert slot.dtype == dtype.np
            np.testing.assert_allclose(slot, state[name], rtol=rtol, err_msg=name)


@pytest.mark.parametrize(
    ("make", "update", "slot_names"),
    [
        (lambda: pv.train.RMSPropOptimizer(0.1), "ApplyRMSProp", ["w/RMSProp", "w/RMSProp_1"]),
        (
            lambda: pv.train.RMSPropOptimizer(0.1, centered=True),
            "ApplyCenteredRMSProp",
            ["w/RMSProp", "w/RMSProp_1", "w/RMSProp_2"],
        ),
        (lambda: pv.train.AdagradOptimizer(0.1), "ApplyAdagrad", ["w/Adagrad"]),
        (lambda: pv.train.AdadeltaOptimizer(), "ApplyAdadelta", ["w/Adadelta", "w/Adadelta_1"]),
    ],
)
def test_slots_and_update_live_on_the_variables_gpu(
    gpus4: None, make: Callable, update: str, slot_names: list[str]
) -> None:
    with pv.device("/gpu:1"):
        w = pv.Variable([1.0, 2.0], name="w")
    with pv.device("/cpu:0"):
        loss = pv.reduce_sum(w * w)
    opt = make()
    train = opt.minimize(loss)
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    sess.run(train)
    placed = sess.placement
    scope = opt.get_name()
    for name in ["w", *slot_names, f"{scope}/update_w/{update}"]:
        assert placed[name] == f"{LOCAL}GPU:1", name
    assert sorted(v.op.name for v in pv.global_variables()) == ["w", *slot_names]


def test_update_ops_refuse_a_gradient_of_another_shape() -> None:
    w = pv.Variable([1.0, 2.0], name="w")
    opt = pv.train.AdagradOptimizer(0.1)
    with pytest.raises(ValueError, match="do not have the same shape"):
        opt.apply_gradients([(pv.constant([1.0, 2.0, 3.0]), w)])


def test_adagrad_needs_a_positive_accumulator() -> None:
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        pv.train.AdagradOptimizer(0.1, initial_accumulator_value=-1.0)


# -- learning-rate schedules ---------------------------------------------------------------------

STEPS = [0, 1, 4, 5, 9, 10, 11, 19, 20, 21, 37, 100]


def _schedule_values(make: Callable[[pv.Tensor], pv.Tensor]) -> np.ndarray:
    step = pv.placeholder(pv.int64, [], name="step")
    lr = make(step)
    sess = pv.Session()
    return np.array([sess.run(lr, {step: s}) for s in STEPS])


def _polynomial(step: int, cycle: bool) -> float:
    lr, horizon, end, power = 0.1, 10.0, 0.01, 2.0
    if cycle:
        horizon *= max(1.0, np.ceil(step / horizon))
    else:
        step = min(step, horizon)
    return (lr - end) * (1 - step / horizon) ** power + end


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (
            lambda s: pv.train.exponential_decay(0.1, s, 10, 0.5),
            [0.1 * 0.5 ** (s / 10) for s in STEPS],
        ),
        (
            lambda s: pv.train.exponential_decay(0.1, s, 10, 0.5, staircase=True),
            [0.1 * 0.5 ** (s // 10) for s in STEPS],
        ),
        (
            lambda s: pv.train.polynomial_decay(0.1, s, 10, 0.01, power=2.0),
            [_polynomial(s, cycle=False) for s in STEPS],
        ),
        (
            lambda s: pv.train.polynomial_decay(0.1, s, 10, 0.01, power=2.0, cycle=True),
            [_polynomial(s, cycle=True) for s in STEPS],
        ),
        (
            lambda s: pv.train.piecewise_constant(s, [5, 10, 20], [1.0, 0.5, 0.1, 0.01]),
            [1.0 if s <= 5 else 0.5 if s <= 10 else 0.1 if s <= 20 else 0.01 for s in STEPS],
        ),
    ],
    ids=["exponential", "staircase", "polynomial", "polynomial_cycle", "piecewise"],
)
def test_schedules_follow_their_formulas(make: Callable, expected: list[float]) -> None:
    np.testing.assert_allclose(_schedule_values(make), expected, rtol=1e-6)


def test_schedules_take_their_scope_names() -> None:
    step = pv.placeholder(pv.int64, [], name="step")
    assert pv.train.exponential_decay(0.1, step, 10, 0.5).name == "ExponentialDecay:0"
    assert pv.train.exponential_decay(0.1, step, 10, 0.5).name == "ExponentialDecay_1:0"
    assert pv.train.polynomial_decay(0.1, step, 10, name="poly").name == "poly:0"
    chosen = pv.train.piecewise_constant(step, [1], [2.0, 1.0])  # TF's case: nested conds
    assert (chosen.op.name, chosen.op.type) == ("PiecewiseConstant/case/cond/Merge", "Merge")


@pytest.mark.parametrize(
    ("boundaries", "values", "words"),
    [
        ([5, 10], [1.0, 0.5], "The length of boundaries should be 1 less"),
        ([5.0], [1.0, 0.5], "must have the same dtype as x"),
        ([5], [1.0, 2], "Values must have elements all with the same dtype"),
    ],
)
def test_piecewise_constant_refuses_what_tensorflow_refuses(
    boundaries: list, values: list, words: str
) -> None:
    step = pv.placeholder(pv.int64, [], name="step")
    with pytest.raises(ValueError, match=words):
        pv.train.piecewise_constant(step, boundaries, values)


# -- clipping ----------------------------------------------------------------------------------

MATRIX = np.array([[3.0, -4.0, 0.5], [0.0, 1.0, -2.0]], np.float32)


def test_clip_by_value_and_by_norm_follow_numpy() -> None:
    x = pv.constant(MATRIX)
    by_value = pv.clip_by_value(x, -1.0, 2.0)
    by_norm = pv.clip_by_norm(x, 2.0)
    by_row_norm = pv.clip_by_norm(x, 2.0, axes=[1])
    values = pv.Session().run([by_value, by_norm, by_row_norm])
    norm = np.sqrt((MATRIX**2).sum())
    rows = np.sqrt((MATRIX**2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(values[0], np.clip(MATRIX, -1.0, 2.0))
    np.testing.assert_allclose(values[1], MATRIX * 2.0 / max(norm, 2.0), rtol=1e-6)
    np.testing.assert_allclose(values[2], MATRIX * 2.0 / np.maximum(rows, 2.0), rtol=1e-6)


def test_clip_by_norm_of_zeros_has_a_finite_gradient() -> None:
    x = pv.zeros([2, 2])
    clipped = pv.clip_by_norm(x, 1.0)
    grad = pv.gradients(pv.reduce_sum(clipped), x)[0]
    values = pv.Session().run([clipped, grad])
    np.testing.assert_array_equal(values[0], np.zeros((2, 2)))
    assert np.isfinite(values[1]).all()


@pytest.mark.parametrize("clip_norm", [1.0, 6.5, 100.0])
def test_clip_by_global_norm_scales_every_tensor_alike(clip_norm: float) -> None:
    a, b = np.array([3.0, 4.0], np.float32), np.float32(12.0)
    clipped, norm = pv.clip_by_global_norm([pv.constant(a), None, pv.constant(b)], clip_norm)
    assert clipped[1] is None
    got = pv.Session().run([clipped[0], clipped[2], norm, pv.global_norm([a, b])])
    expected_norm = np.sqrt((a**2).sum() + b**2)
    scale = clip_norm / max(expected_norm, clip_norm)
    np.testing.assert_allclose(got[0], a * scale, rtol=1e-6)
    np.testing.assert_allclose(got[1], b * scale, rtol=1e-6)
    np.testing.assert_allclose([got[2], got[3]], [expected_norm] * 2, rtol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_clip_by_global_norm_of_an_infinite_norm_is_nan() -> None:
    clipped, _ = pv.clip_by_global_norm([pv.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(pv.Session().run(clipped[0])).all()


def test_clipping_a_list_needs_a_list() -> None:
    with pytest.raises(TypeError, match="`t_list` should be a sequence of tensors"):
        pv.clip_by_global_norm(pv.constant([1.0]), 1.0)
    with pytest.raises(TypeError, match="`t_list` should be a sequence of tensors"):
        pv.global_norm("abc")


def test_l2_loss_and_its_gradient() -> None:
    x = pv.constant(MATRIX)
    loss = pv.nn.l2_loss(x)
    (grad,) = pv.gradients(loss * 3.0, x)
    assert loss.op.type == "L2Loss" and loss.shape == pv.TensorShape([])
    assert grad.op.name == "gradients/L2Loss_grad/mul"
    value, dx = pv.Session().run([loss, grad])
    np.testing.assert_allclose(value, (MATRIX**2).sum() / 2, rtol=1e-6)
    np.testing.assert_allclose(dx, 3.0 * MATRIX, rtol=1e-6)
    with pytest.raises(TypeError, match="L2Loss does not support int32"):
        pv.nn.l2_loss(pv.constant([1, 2]))


# -- moving averages -----------------------------------------------------------------------------


def test_moving_average_of_a_variable_starts_at_its_value_and_decays() -> None:
    w = pv.Variable([1.0, 2.0], name="w")
    ema = pv.train.ExponentialMovingAverage(0.75)
    update = ema.apply([w])
    assign = w.assign(w * 3.0 + 1.0)
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    value = shadow = np.array([1.0, 2.0])
    for _ in range(3):
        sess.run(assign)
        value = value * 3.0 + 1.0
        sess.run(update)
        shadow = shadow - (shadow - value) * 0.25
        np.testing.assert_allclose(sess.run(ema.average(w)), shadow, rtol=1e-6)
    assert ema.average(w).op.name == "w/ExponentialMovingAverage"
    assert pv.moving_average_variables() == [w]
    assert w in pv.trainable_variables() and ema.average(w) not in pv.trainable_variables()


def test_num_updates_lowers_the_decay_at_first() -> None:
    w = pv.Variable([4.0], name="w")
    count = pv.Variable(0, name="count", trainable=False)
    ema = pv.train.ExponentialMovingAverage(0.9, num_updates=count)
    update = ema.apply([w])
    bump = [w.assign_add([2.0]), count.assign_add(1)]
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    value, shadow, n = 4.0, 4.0, 0
    for _ in range(4):
        sess.run(bump)
        value, n = value + 2.0, n + 1
        sess.run(update)
        decay = min(0.9, (1 + n) / (10 + n))
        shadow = shadow - (shadow - value) * (1 - decay)
        np.testing.assert_allclose(sess.run(ema.average(w)), [shadow], rtol=1e-6)


@pytest.mark.parametrize("zero_debias", [False, True])
def test_moving_average_of_a_tensor_starts_at_zero(zero_debias: bool) -> None:
    feed = pv.placeholder(pv.float32, [2], name="feed")
    t = pv.identity(feed, name="t")
    ema = pv.train.ExponentialMovingAverage(0.5, zero_debias=zero_debias)
    update = ema.apply([t])
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    biased = np.zeros(2)
    for step, value in enumerate([np.array([2.0, 4.0]), np.array([6.0, -2.0])], start=1):
        sess.run(update, {feed: value})
        biased = biased - (biased - value) * 0.5
        expected = biased / (1 - 0.5**step) if zero_debias else biased
        np.testing.assert_allclose(sess.run(ema.average(t)), expected, rtol=1e-6)


def test_moving_average_names_and_restore_map() -> None:
    w = pv.Variable([1.0], name="w")
    frozen = pv.Variable(2.0, name="frozen", trainable=False)
    ema = pv.train.ExponentialMovingAverage(0.5)
    assert ema.average_name(w) == "w/ExponentialMovingAverage" and ema.average(w) is None
    ema.apply([w])
    ema.apply([w])  # the shadow is made once
    restore = ema.variables_to_restore()
    assert restore == {"w/ExponentialMovingAverage": w, "frozen": frozen}
    with pytest.raises(TypeError, match="must be half, float, or double: n:0"):
        ema.apply([pv.Variable(1, name="n")])
