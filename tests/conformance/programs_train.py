"""Conformance programs: optimizers, learning-rate schedules, gradient clipping and moving
averages (issue 24, item 5)."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []


# -- optimizers: values of variables and slots after steps, update ops, slot names -------------


def _quadratic(tf: Any, dtype: Any = None) -> tuple[Any, Any]:
    """``sum(w * w * x)``: a gradient that changes every step (``2 w x``)."""
    dtype = dtype or tf.float32
    w = tf.Variable(np.array([1.0, -2.0, 0.5], dtype=dtype.as_numpy_dtype), name="w")
    x = tf.constant(np.array([3.0, 4.0, 1.0], dtype=dtype.as_numpy_dtype), name="x")
    return w, tf.reduce_sum(w * w * x, name="loss")


def _steps(tf: Any, opt: Any, count: int = 3, dtype: Any = None) -> Any:
    """Minimize the quadratic ``count`` times, then fetch every global variable (slots too)."""
    _, loss = _quadratic(tf, dtype)
    step = opt(tf).minimize(loss)
    return Runs(tf.global_variables_initializer(), *[step] * count, tf.global_variables())


family(
    "train_steps",
    {
        "rmsprop": lambda tf: _steps(tf, lambda tf: tf.train.RMSPropOptimizer(0.1)),
        "rmsprop_momentum": lambda tf: _steps(
            tf, lambda tf: tf.train.RMSPropOptimizer(0.05, decay=0.8, momentum=0.5)
        ),
        "rmsprop_centered": lambda tf: _steps(
            tf, lambda tf: tf.train.RMSPropOptimizer(0.05, momentum=0.3, centered=True)
        ),
        "rmsprop_epsilon": lambda tf: _steps(
            tf, lambda tf: tf.train.RMSPropOptimizer(0.1, epsilon=1.0)
        ),
        "adagrad": lambda tf: _steps(tf, lambda tf: tf.train.AdagradOptimizer(0.5)),
        "adagrad_accumulator": lambda tf: _steps(
            tf, lambda tf: tf.train.AdagradOptimizer(0.2, initial_accumulator_value=2.0)
        ),
        "adadelta": lambda tf: _steps(tf, lambda tf: tf.train.AdadeltaOptimizer(1.0)),
        "adadelta_rho": lambda tf: _steps(
            tf, lambda tf: tf.train.AdadeltaOptimizer(10.0, rho=0.5, epsilon=1e-4)
        ),
        "rmsprop_named": lambda tf: _steps(
            tf, lambda tf: tf.train.RMSPropOptimizer(0.1, name="Fast")
        ),
    },
)


def _slot_facts(tf: Any, opt: Any) -> Any:
    w, loss = _quadratic(tf)
    optimizer = opt(tf)
    optimizer.minimize(loss)
    names = optimizer.get_slot_names()
    return Note(
        slots=names,
        slot_variables={n: optimizer.get_slot(w, n).name for n in names},
        variables=[v.name for v in tf.global_variables()],
        trainable=[v.name for v in tf.trainable_variables()],
    )


family(
    "train_slots",
    {
        "rmsprop": lambda tf: _slot_facts(tf, lambda tf: tf.train.RMSPropOptimizer(0.1)),
        "rmsprop_centered": lambda tf: _slot_facts(
            tf, lambda tf: tf.train.RMSPropOptimizer(0.1, centered=True)
        ),
        "adagrad": lambda tf: _slot_facts(tf, lambda tf: tf.train.AdagradOptimizer(0.1)),
        "adadelta": lambda tf: _slot_facts(tf, lambda tf: tf.train.AdadeltaOptimizer(0.1)),
    },
)


def _pinned(tf: Any, opt: Any) -> Any:
    """The variable on /cpu:1, the loss on /cpu:0: slots and the update follow the variable."""
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
    with tf.device("/cpu:0"):
        loss = tf.reduce_sum(w * w, name="loss")
    step = opt(tf).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, tf.global_variables())


family(
    "train_pinned",
    {
        "rmsprop": lambda tf: _pinned(tf, lambda tf: tf.train.RMSPropOptimizer(0.1)),
        "rmsprop_centered": lambda tf: _pinned(
            tf, lambda tf: tf.train.RMSPropOptimizer(0.1, momentum=0.9, centered=True)
        ),
        "adagrad": lambda tf: _pinned(tf, lambda tf: tf.train.AdagradOptimizer(0.1)),
        "adadelta": lambda tf: _pinned(tf, lambda tf: tf.train.AdadeltaOptimizer(1.0)),
    },
    cpus=2,
)


@program
def train_rmsprop_two_variables_global_step(tf: Any) -> Any:
    _, loss = _quadratic(tf)
    b = tf.Variable(0.5, name="b")
    total = loss + b * b
    gs = tf.train.get_or_create_global_step()
    step = tf.train.RMSPropOptimizer(0.1, momentum=0.9).minimize(total, global_step=gs)
    return Runs(tf.global_variables_initializer(), step, step, tf.global_variables())


@program
def train_adagrad_float64(tf: Any) -> Any:
    return _steps(tf, lambda tf: tf.train.AdagradOptimizer(0.5), count=2, dtype=tf.float64)


@program
def train_adadelta_compute_and_apply(tf: Any) -> Any:
    w, loss = _quadratic(tf)
    opt = tf.train.AdadeltaOptimizer(1.0)
    grads = opt.compute_gradients(loss)
    step = opt.apply_gradients(grads)
    return Runs(tf.global_variables_initializer(), [g for g, _ in grads], step, w)


@program(error=["initial_accumulator_value must be positive"])
def train_error_adagrad_accumulator(tf: Any) -> Any:
    return tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


@program
def train_rmsprop_decayed_learning_rate(tf: Any) -> Any:
    w, loss = _quadratic(tf)
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.1, gs, 1, 0.5)
    step = tf.train.RMSPropOptimizer(lr).minimize(loss, global_step=gs)
    return Runs(tf.global_variables_initializer(), step, step, [w, lr, gs])


# -- learning-rate schedules: values at several global steps -----------------------------------


def _schedule(tf: Any, make: Any, steps: tuple[int, ...] = (0, 3, 5, 10, 15, 25)) -> Any:
    gs = tf.placeholder(tf.int64, [], name="gs")
    lr = make(tf, gs)
    return Runs(*[Run(lr, {gs: s}) for s in steps])


family(
    "train_schedule",
    {
        "exponential": lambda tf: _schedule(
            tf, lambda tf, gs: tf.train.exponential_decay(0.1, gs, 10, 0.5)
        ),
        "exponential_staircase": lambda tf: _schedule(
            tf, lambda tf, gs: tf.train.exponential_decay(0.1, gs, 10, 0.5, staircase=True)
        ),
        "exponential_named": lambda tf: _schedule(
            tf, lambda tf, gs: tf.train.exponential_decay(0.3, gs, 4, 0.9, name="lr")
        ),
        "exponential_float64": lambda tf: _schedule(
            tf,
            lambda tf, gs: tf.train.exponential_decay(
                tf.constant(0.1, tf.float64, name="base"), gs, 3, 0.25
            ),
        ),
        "polynomial": lambda tf: _schedule(
            tf, lambda tf, gs: tf.train.polynomial_decay(0.1, gs, 10, 0.01, power=2.0)
        ),
        "polynomial_linear": lambda tf: _schedule(
            tf, lambda tf, gs: tf.train.polynomial_decay(1.0, gs, 20)
        ),
        "polynomial_cycle": lambda tf: _schedule(
            tf,
            lambda tf, gs: tf.train.polynomial_decay(0.1, gs, 10, 0.01, power=2.0, cycle=True),
        ),
        "two_schedules": lambda tf: _schedule(
            tf,
            lambda tf, gs: (
                tf.train.exponential_decay(0.1, gs, 10, 0.5)
                + tf.train.exponential_decay(0.2, gs, 5, 0.5, staircase=True)
            ),
        ),
    },
)


@program
def train_schedule_global_step_variable(tf: Any) -> Any:
    w, loss = _quadratic(tf)
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.polynomial_decay(0.1, gs, 2, 0.02)
    step = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)
    return Runs(tf.global_variables_initializer(), lr, step, lr, step, step, [lr, w, gs])


def _piecewise(tf: Any) -> Any:
    return _schedule(
        tf,
        lambda tf, gs: tf.train.piecewise_constant(gs, [5, 10], [1.0, 0.5, 0.1]),
        steps=(0, 4, 5, 6, 10, 11, 100),
    )


# TensorFlow picks the value with tf.case (Switch/Merge): values compared here, the graph in
# train_piecewise_constant_graph (a known difference).
program(_piecewise, name="train_piecewise_constant", skip=["graph"])
program(_piecewise, name="train_piecewise_constant_graph")


@program(skip=["graph"])
def train_piecewise_constant_float_steps(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [], name="x")
    lr = tf.train.piecewise_constant(x, [0.5, 1.5, 2.5], [4, 3, 2, 1])
    return Runs(*[Run(lr, {x: v}) for v in (0.0, 0.5, 1.0, 2.0, 2.5, 3.0)])


@program(skip=["graph"])
def train_piecewise_constant_single_boundary(tf: Any) -> Any:
    gs = tf.placeholder(tf.int32, [], name="gs")
    lr = tf.train.piecewise_constant(gs, [3], [0.1, 0.01])
    return Runs(*[Run(lr, {gs: v}) for v in (0, 3, 4)])


@program(error=["The length of boundaries should be 1 less than the length of values"])
def train_error_piecewise_lengths(tf: Any) -> Any:
    gs = tf.placeholder(tf.int64, [], name="gs")
    return tf.train.piecewise_constant(gs, [5, 10], [1.0, 0.5])


@program(error=["must have the same dtype as x"])
def train_error_piecewise_boundary_dtype(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [], name="x")
    return tf.train.piecewise_constant(x, [5, 10], [1.0, 0.5, 0.1])


@program(error=["Values must have elements all with the same dtype"])
def train_error_piecewise_values_dtype(tf: Any) -> Any:
    gs = tf.placeholder(tf.int64, [], name="gs")
    return tf.train.piecewise_constant(gs, [5], [1.0, 2])


# -- clipping ----------------------------------------------------------------------------------


def _matrix(tf: Any) -> Any:
    return tf.constant([[3.0, -4.0, 0.5], [0.0, 1.0, -2.0]], name="x")


family(
    "train_clip",
    {
        "by_value": lambda tf: tf.clip_by_value(_matrix(tf), -1.0, 1.0),
        "by_value_tensor_bounds": lambda tf: tf.clip_by_value(
            _matrix(tf), tf.constant([-1.0, 0.0, -3.0], name="lo"), 2.0, name="clipped"
        ),
        "by_norm": lambda tf: tf.clip_by_norm(_matrix(tf), 2.0),
        "by_norm_large": lambda tf: tf.clip_by_norm(_matrix(tf), 100.0),
        "by_norm_axes": lambda tf: tf.clip_by_norm(_matrix(tf), 2.0, axes=[1]),
        "by_norm_zeros": lambda tf: tf.clip_by_norm(tf.zeros([2, 2], name="z"), 1.0),
        "global_norm": lambda tf: tf.global_norm(
            [tf.constant([3.0, 4.0], name="a"), None, tf.constant(12.0, name="b")]
        ),
        "by_global_norm": lambda tf: tf.clip_by_global_norm(
            [tf.constant([3.0, 4.0], name="a"), None, tf.constant(12.0, name="b")], 6.5
        ),
        "by_global_norm_unclipped": lambda tf: tf.clip_by_global_norm(
            [tf.constant([3.0, 4.0], name="a"), _matrix(tf)], 100.0
        ),
        "by_global_norm_named": lambda tf: tf.clip_by_global_norm(
            [tf.constant([3.0, 4.0], name="a")], 1.0, name="clip"
        ),
        "by_global_norm_use_norm": lambda tf: tf.clip_by_global_norm(
            [tf.constant([3.0, 4.0], name="a")], 1.0, use_norm=tf.constant(10.0, name="n")
        ),
        "l2_loss": lambda tf: tf.nn.l2_loss(_matrix(tf)),
    },
)


@program(error=["`t_list` should be a sequence of tensors"])
def train_error_clip_by_global_norm_tensor(tf: Any) -> Any:
    return tf.clip_by_global_norm(tf.constant([3.0, 4.0], name="a"), 1.0)


@program(error=["`t_list` should be a sequence of tensors"])
def train_error_global_norm_tensor(tf: Any) -> Any:
    return tf.global_norm(tf.constant([3.0, 4.0], name="a"))


@program(error=["incompatible"])
def train_error_clip_by_value_broadcast(tf: Any) -> Any:
    return tf.clip_by_value(tf.constant([1.0, 2.0], name="x"), tf.zeros([3, 2]), 1.0)


@program
def train_l2_loss_gradient(tf: Any) -> Any:
    x = tf.constant([[1.0, -2.0], [3.0, 0.5]], name="x")
    loss = tf.nn.l2_loss(x * 2.0, name="penalty")
    return [loss, tf.gradients(loss, x)]


@program(cpus=2)
def train_clip_by_global_norm_placement(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant([3.0, 4.0], name="a")
    b = tf.constant([[1.0, 2.0]], name="b")
    clipped, norm = tf.clip_by_global_norm([a, b], 2.0)
    return [clipped, norm]


@program
def train_clipped_gradients_step(tf: Any) -> Any:
    w, loss = _quadratic(tf)
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads, variables = zip(*opt.compute_gradients(loss))
    clipped, norm = tf.clip_by_global_norm(grads, 5.0)
    step = opt.apply_gradients(zip(clipped, variables))
    return Runs(tf.global_variables_initializer(), [clipped, norm], step, w)


# -- exponential moving averages ---------------------------------------------------------------


def _ema_of_tensor(tf: Any, **options: Any) -> Any:
    w = tf.Variable([1.0, 2.0], name="w")
    t = tf.multiply(w, 2.0, name="t")
    ema = tf.train.ExponentialMovingAverage(0.5, **options)
    update = ema.apply([t])
    triple = w.assign(w * 3.0)
    return Runs(
        tf.global_variables_initializer(), update, ema.average(t), triple, update,
        tf.global_variables(),
    )  # fmt: skip


family(
    "train_ema_tensor",
    {
        "plain": lambda tf: _ema_of_tensor(tf),
        "zero_debias": lambda tf: _ema_of_tensor(tf, zero_debias=True),
        "named": lambda tf: _ema_of_tensor(tf, name="Shadow"),
    },
)


def _ema_of_variables(tf: Any) -> Any:
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(3.0, name="b")
    ema = tf.train.ExponentialMovingAverage(0.25)
    update = ema.apply([w, b])
    return Runs(
        tf.global_variables_initializer(), [ema.average(w), ema.average(b)],
        update, w.assign(w * 3.0), update, tf.global_variables(),
    )  # fmt: skip


# TensorFlow starts a variable's shadow through tf.cond(IsVariableInitialized): values compared
# here, the graph in train_ema_variables_graph (a known difference).
program(_ema_of_variables, name="train_ema_variables", skip=["graph"])
program(_ema_of_variables, name="train_ema_variables_graph")


@program(skip=["graph"])
def train_ema_num_updates(tf: Any) -> Any:
    w = tf.Variable([1.0, 2.0], name="w")
    gs = tf.Variable(0, name="gs", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=gs)
    update = ema.apply([w])
    bump = [w.assign(w + 1.0), gs.assign_add(5)]
    return Runs(
        tf.global_variables_initializer(), bump, update, bump, update, tf.global_variables()
    )


@program(skip=["graph"])
def train_ema_after_optimizer(tf: Any) -> Any:
    w, loss = _quadratic(tf)
    step = tf.train.AdagradOptimizer(0.5).minimize(loss)
    ema = tf.train.ExponentialMovingAverage(0.5)
    with tf.control_dependencies([step]):
        train = tf.group(ema.apply([w]), name="train")
    return Runs(tf.global_variables_initializer(), train, train, [w, ema.average(w)])


@program(skip=["graph"])
def train_ema_names(tf: Any) -> Any:
    w = tf.Variable([1.0, 2.0], name="w")
    other = tf.Variable(1.0, name="other", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.5)
    before = ema.average_name(w)
    ema.apply([w])
    restore = ema.variables_to_restore()
    return Note(
        before=before,
        after=ema.average_name(w),
        average=ema.average(w).name,
        missing=ema.average(other) is None,
        restore={k: v.name for k, v in restore.items()},
        collection=[v.name for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)],
        averaged=[v.name for v in tf.moving_average_variables()],
        variables=[v.name for v in tf.global_variables()],
    )


@program(error=["The variables must be half, float, or double"])
def train_error_ema_integer(tf: Any) -> Any:
    n = tf.Variable(3, name="n")
    return tf.train.ExponentialMovingAverage(0.5).apply([n])


@program(cpus=2)
def train_ema_tensor_pinned(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
        t = tf.square(w, name="t")
    ema = tf.train.ExponentialMovingAverage(0.5)
    update = ema.apply([t])
    return Runs(tf.global_variables_initializer(), update, ema.average(t))


@program(cpus=2, skip=["graph"])
def train_ema_variable_pinned(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
    with tf.device("/cpu:0"):
        ema = tf.train.ExponentialMovingAverage(0.5)
        update = ema.apply([w])
    return Runs(tf.global_variables_initializer(), w.assign([3.0, 4.0]), update, ema.average(w))


# -- gradients through clipping ------------------------------------------------------------------


family(
    "train_clip_gradient",
    {
        "by_value": lambda tf: _through(tf, lambda x: tf.clip_by_value(x, -1.0, 1.0)),
        "by_norm": lambda tf: _through(tf, lambda x: tf.clip_by_norm(x, 2.0)),
        "by_norm_zeros": lambda tf: _through(tf, lambda x: tf.clip_by_norm(x * 0.0, 1.0)),
        "global_norm": lambda tf: _through(tf, lambda x: tf.global_norm([x, x * 2.0])),
        "by_global_norm": lambda tf: _through(
            tf, lambda x: tf.clip_by_global_norm([x, tf.square(x)], 3.0)[0][1]
        ),
    },
)


def _through(tf: Any, clip: Any) -> Any:
    x = _matrix(tf)
    y = clip(x)
    return [y, tf.gradients(tf.reduce_sum(y * y), x)]


@program
def train_floor_and_ceil_pass_no_gradient(tf: Any) -> Any:
    x = tf.constant([1.0, 2.2, -3.5], name="x")
    y = tf.floor(x * 2.5) + tf.ceil(x) + x * x
    return [y, tf.gradients(y, x), tf.gradients(tf.floor(x), x)]


@program(cpus=3)
def train_tuple_gate_keeps_the_device_scope(tf: Any) -> Any:
    """TF's tuple builds its gate inside the scopes it is called in (only gradients clear them)."""
    a = tf.constant(1.0, name="a")
    with tf.device("/cpu:1"), tf.colocate_with(a):
        b = tf.constant(2.0, name="b")
    with tf.device("/cpu:2"):
        joined = tf.tuple([a, b], name="joined")
    return Run(joined)
