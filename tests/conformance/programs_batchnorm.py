"""Conformance programs: fused batch norm and tf.layers.batch_normalization (issue 24, item 2).

TensorFlow's grappler rewrites an inference-mode FusedBatchNormV3 into Mul/Add ops and then
cannot fetch the op's statistics outputs, so inference programs fetch only ``y``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []

_RNG = np.random.RandomState(24)
_NHWC = (_RNG.randn(2, 3, 3, 4) * 2 + 1).astype(np.float32)
_NCHW = np.ascontiguousarray(_NHWC.transpose(0, 3, 1, 2))
_WEIGHTS = _RNG.randn(2, 3, 3, 4).astype(np.float32)  # makes the x gradient non-trivial
_NCHW_WEIGHTS = np.ascontiguousarray(_WEIGHTS.transpose(0, 3, 1, 2))
_SCALE = [1.0, 2.0, 0.5, 1.5]
_OFFSET = [0.0, 0.1, -0.2, 0.3]
_MEAN = [0.5, -0.5, 1.0, 0.0]
_VARIANCE = [2.0, 1.0, 0.5, 4.0]
_ROWS = (_RNG.randn(6, 4) * 3 - 1).astype(np.float32)


def _batch(tf: Any, value: np.ndarray = _NHWC, dtype: Any = None) -> tuple[Any, dict[Any, Any]]:
    """A placeholder fed with ``value`` (a fed batch keeps grappler's constant folding away)."""
    x = tf.placeholder(dtype or tf.float32, value.shape, name="x")
    return x, {x: value}


def _fused(tf: Any, data_format: str = "NHWC", **kwargs: Any) -> tuple[Any, Any, dict[Any, Any]]:
    x, feed = _batch(tf, _NCHW if data_format == "NCHW" else _NHWC)
    outputs = tf.nn.fused_batch_norm(
        x, tf.constant(_SCALE), tf.constant(_OFFSET), data_format=data_format, **kwargs
    )
    return x, outputs, feed


def _inference(tf: Any, data_format: str = "NHWC") -> tuple[Any, Any, dict[Any, Any]]:
    return _fused(tf, data_format, mean=_MEAN, variance=_VARIANCE, is_training=False)


# -- FusedBatchNormV3 values -------------------------------------------------------------------
def _fetch_all(tf: Any, data_format: str = "NHWC", **kwargs: Any) -> Run:
    _, outputs, feed = _fused(tf, data_format, **kwargs)
    return Run(list(outputs), feed)


def _fetch_y(build: Any) -> Any:
    def run(tf: Any) -> Run:
        _, outputs, feed = build(tf)
        return Run(outputs[0], feed)

    return run


def _reserve_spaces(tf: Any) -> Run:
    _, outputs, feed = _fused(tf)
    return Run(list(outputs[0].op.outputs[3:]), feed)


def _float16(tf: Any) -> Run:
    x, feed = _batch(tf, _NHWC.astype(np.float16), tf.float16)
    y, mean, variance = tf.nn.fused_batch_norm(x, tf.constant(_SCALE), tf.constant(_OFFSET))
    return Run([y, mean, variance], feed)


def _five_dims(tf: Any) -> Run:
    x, feed = _batch(tf, _NHWC.reshape(2, 3, 3, 1, 4))
    outputs = tf.nn.fused_batch_norm(x, _SCALE, _OFFSET, data_format="NDHWC")
    return Run(list(outputs), feed)


def _python_inputs(tf: Any) -> Any:
    return list(tf.nn.fused_batch_norm(_NHWC, _SCALE, _OFFSET, name="bn"))


def _one_per_channel(tf: Any) -> Run:
    x, feed = _batch(tf, _NHWC[:1, :1, :1])
    return Run(list(tf.nn.fused_batch_norm(x, _SCALE, _OFFSET)), feed)


family(
    "bn_fused",
    {
        "training": _fetch_all,
        "training_nchw": lambda tf: _fetch_all(tf, "NCHW"),
        "training_epsilon": lambda tf: _fetch_all(tf, epsilon=0.5),
        "training_averaged": lambda tf: _fetch_all(
            tf, mean=_MEAN, variance=_VARIANCE, exponential_avg_factor=0.3
        ),
        "training_reserve_spaces": _reserve_spaces,
        "inference": _fetch_y(_inference),
        "inference_nchw": _fetch_y(lambda tf: _inference(tf, "NCHW")),
        "float16": _float16,
        "five_dims": _five_dims,
        "python_inputs_named": _python_inputs,
        "one_element_per_channel": _one_per_channel,
    },
)


# -- the gradient ------------------------------------------------------------------------------
def _gradients(build: Any) -> Any:
    def run(tf: Any) -> Run:
        x, (y, _, _), feed = build(tf)
        weights = _WEIGHTS if y.shape.as_list() == list(_WEIGHTS.shape) else _NCHW_WEIGHTS
        loss = tf.reduce_sum(y * tf.constant(weights))
        return Run(tf.gradients(loss, [x, y.op.inputs[1], y.op.inputs[2]]), feed)

    return run


def _gradient_of_mean(tf: Any) -> Run:
    x, (_, mean, _), feed = _fused(tf)
    return Run(tf.gradients(tf.reduce_sum(mean), x), feed)


family(
    "bn_grad",
    {
        "training": _gradients(_fused),
        "training_nchw": _gradients(lambda tf: _fused(tf, "NCHW")),
        "inference": _gradients(_inference),
        "inference_nchw": _gradients(lambda tf: _inference(tf, "NCHW")),
        "of_batch_mean_only": _gradient_of_mean,
    },
)


# -- tf.layers.batch_normalization -------------------------------------------------------------
def _layer_run(tf: Any, value: np.ndarray = _NHWC, **kwargs: Any) -> Runs:
    x, feed = _batch(tf, value)
    y = tf.layers.batch_normalization(x, **kwargs)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return Runs(tf.global_variables_initializer(), Run([y, update_ops], feed))


def _collections(tf: Any) -> Note:
    x, _ = _batch(tf)
    tf.layers.batch_normalization(x, training=True)
    tf.layers.batch_normalization(x, training=False, name="frozen")
    graph = tf.get_default_graph()
    return Note(
        update_ops=[(op.name, op.type) for op in graph.get_collection(tf.GraphKeys.UPDATE_OPS)],
        global_variables=[v.name for v in tf.global_variables()],
        trainable_variables=[v.name for v in tf.trainable_variables()],
    )


def _layer_class(tf: Any) -> Runs:
    x, feed = _batch(tf)
    layer = tf.layers.BatchNormalization(momentum=0.9, epsilon=0.01, name="norm")
    y = layer(x, training=True)
    note = Note(
        updates=[op.name for op in layer.updates],
        variables=[v.name for v in layer.variables],
        trainable=[v.name for v in layer.trainable_variables],
        non_trainable=[v.name for v in layer.non_trainable_variables],
    )
    return Runs(note, tf.global_variables_initializer(), Run([y, layer.updates], feed))


def _called_twice(tf: Any) -> Runs:
    """One layer for training and for evaluation: the second call reuses the variables."""
    x, feed = _batch(tf)
    layer = tf.layers.BatchNormalization()
    trained, frozen = layer(x, training=True), layer(x, training=False)
    return Runs(tf.global_variables_initializer(), Run([trained, frozen], feed))


def _moving_averages(tf: Any, value: np.ndarray = _NHWC, **kwargs: Any) -> Runs:
    """Three runs of the update ops on three batches move the moving statistics."""
    x = tf.placeholder(tf.float32, value.shape, name="x")
    tf.layers.batch_normalization(x, training=True, momentum=0.5, **kwargs)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    moving = [v for v in tf.global_variables() if "moving" in v.name]
    steps = [Run(update_ops, {x: value * (k + 1) - k}) for k in range(3)]
    return Runs(tf.global_variables_initializer(), *steps, moving)


def _train_loop(tf: Any) -> Runs:
    """The usual TF1 loop: the train op waits for the update ops."""
    x, _ = _batch(tf)
    y = tf.layers.batch_normalization(x, training=True)
    loss = tf.reduce_sum(y * tf.constant(_WEIGHTS))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    steps = [Run(train_op, {x: _NHWC * (k + 1)}) for k in range(3)]
    return Runs(tf.global_variables_initializer(), *steps, tf.global_variables())


def _reuse(tf: Any) -> Runs:
    x, feed = _batch(tf)
    first = tf.layers.batch_normalization(x, name="bn", training=True)
    second = tf.layers.batch_normalization(x, name="bn", reuse=True, training=False)
    return Runs(tf.global_variables_initializer(), Run([first, second], feed))


def _in_variable_scope(tf: Any) -> Runs:
    x, feed = _batch(tf)
    with tf.variable_scope("block"):
        y = tf.layers.batch_normalization(x, training=True)
    names = Note(variables=[v.name for v in tf.global_variables()])
    return Runs(names, tf.global_variables_initializer(), Run(y, feed))


def _float64(tf: Any) -> Runs:
    x, feed = _batch(tf, _NHWC.astype(np.float64), tf.float64)
    y = tf.layers.batch_normalization(x, training=True)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return Runs(tf.global_variables_initializer(), Run([y, update_ops], feed))


family(
    "bn_layer",
    {
        "training": lambda tf: _layer_run(tf, training=True),
        "inference": lambda tf: _layer_run(tf, training=False),
        "default_is_inference": lambda tf: _layer_run(tf),
        "training_one_int": lambda tf: _layer_run(tf, training=1),
        "training_constant_tensor": lambda tf: _layer_run(tf, training=tf.constant(True)),
        "axis1_nchw": lambda tf: _layer_run(tf, _NCHW, axis=1, training=True),
        "no_center_no_scale": lambda tf: _layer_run(tf, center=False, scale=False, training=True),
        "named_momentum_epsilon": lambda tf: _layer_run(
            tf, name="bn", momentum=0.9, epsilon=0.1, training=True
        ),
        "rows_training": lambda tf: _layer_run(tf, _ROWS, training=True),
        "rows_inference": lambda tf: _layer_run(tf, _ROWS, training=False),
        "fused_false": lambda tf: _layer_run(tf, fused=False, training=True),
        "axis2_not_fused": lambda tf: _layer_run(tf, axis=2, training=True),
        "collections": _collections,
        "class": _layer_class,
        "class_called_twice": _called_twice,
        "moving_averages": _moving_averages,
        "moving_averages_rows": lambda tf: _moving_averages(tf, _ROWS),
        "moving_averages_nchw": lambda tf: _moving_averages(tf, _NCHW, axis=1),
        "train_loop": _train_loop,
        "five_dims": lambda tf: _layer_run(tf, _NHWC.reshape(2, 3, 3, 1, 4), training=True),
        "five_dims_axis3_not_fused": lambda tf: _layer_run(
            tf, _NHWC.reshape(2, 3, 4, 1, 3), axis=3, training=True
        ),
        "not_trainable": lambda tf: _layer_run(tf, trainable=False, training=True),
        "initializers": lambda tf: _layer_run(
            tf,
            gamma_initializer=tf.constant_initializer(2.0),
            moving_variance_initializer=tf.constant_initializer(3.0),
            training=False,
        ),
        "reuse": _reuse,
        "in_variable_scope": _in_variable_scope,
        "float64_not_fused": _float64,
    },
)


@program
def bn_layer_float16(tf: Any) -> Runs:
    x, feed = _batch(tf, _NHWC.astype(np.float16), tf.float16)
    y = tf.layers.batch_normalization(x, training=True)
    moving = [v for v in tf.global_variables() if "moving" in v.name]
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return Runs(tf.global_variables_initializer(), Run([y, update_ops], feed), moving)


@program
def bn_layer_training_placeholder(tf: Any) -> Any:
    """TF builds tf.cond's Switch/Merge ops for a fed ``training``; placeviz has none yet."""
    x, feed = _batch(tf)
    training = tf.placeholder(tf.bool, [], name="training")
    y = tf.layers.batch_normalization(x, training=training)
    return Runs(tf.global_variables_initializer(), Run(y, {**feed, training: True}))


# -- placement ---------------------------------------------------------------------------------
@program(cpus=2)
def bn_pinned_to_cpu1(tf: Any) -> Runs:
    x, feed = _batch(tf)
    with tf.device("/cpu:1"):
        y = tf.layers.batch_normalization(x, training=True)
    grads = tf.gradients(tf.reduce_sum(y * tf.constant(_WEIGHTS)), [x, *tf.trainable_variables()])
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return Runs(tf.global_variables_initializer(), Run([y, grads, update_ops], feed))


@program(cpus=2)
def bn_fused_op_pinned_to_cpu1(tf: Any) -> Run:
    x, feed = _batch(tf)
    with tf.device("/cpu:1"):
        outputs = tf.nn.fused_batch_norm(x, _SCALE, _OFFSET)
    return Run([*outputs, tf.gradients(outputs[0] * _WEIGHTS, x)], feed)


@program(cpus=2)
def bn_train_op_colocated_with_cpu1(tf: Any) -> Runs:
    """The gradients of a batch norm on /cpu:1 follow it there; the train op waits for the
    moving-average updates."""
    x, feed = _batch(tf)
    with tf.device("/cpu:1"):
        y = tf.layers.batch_normalization(x, training=True, momentum=0.5)
    loss = tf.reduce_sum(y * tf.constant(_WEIGHTS))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
            loss, colocate_gradients_with_ops=True
        )
    steps = [Run(train_op, feed) for _ in range(2)]
    return Runs(tf.global_variables_initializer(), *steps, tf.global_variables())


# -- errors ------------------------------------------------------------------------------------
def _wrong_scale(tf: Any) -> Run:
    """A scale whose size construction does not know fails when the op runs."""
    x, feed = _batch(tf)
    scale = tf.placeholder(tf.float32, [None], name="scale")
    y, _, _ = tf.nn.fused_batch_norm(x, scale, _OFFSET)
    return Run(y, {**feed, scale: np.ones(3, np.float32)})


family(
    "bn_error",
    {
        "scale_size": lambda tf: tf.nn.fused_batch_norm(_NHWC, [1.0, 2.0, 3.0], _OFFSET),
        "offset_size": lambda tf: tf.nn.fused_batch_norm(_NHWC, _SCALE, [0.0] * 5),
        "inference_mean_size": lambda tf: tf.nn.fused_batch_norm(
            _NHWC, _SCALE, _OFFSET, mean=[0.0] * 3, variance=_VARIANCE, is_training=False
        ),
    },
    error=("Dimensions must be equal",),
)
family(
    "bn_error_rank",
    {
        "3": lambda tf: tf.nn.fused_batch_norm(_NHWC[0], _SCALE, _OFFSET),
        "5_as_nhwc": lambda tf: tf.nn.fused_batch_norm(_NHWC[None], _SCALE, _OFFSET),
    },
    error=("Shape must be rank 4 but is rank",),
)
family(
    "bn_error_vector_rank",
    {"scale": lambda tf: tf.nn.fused_batch_norm(_NHWC, [_SCALE], _OFFSET)},
    error=("Shape must be rank 1 but is rank 2",),
)
family(
    "bn_error_missing_statistics",
    {
        "inference": lambda tf: tf.nn.fused_batch_norm(_NHWC, _SCALE, _OFFSET, is_training=False),
        "averaged": lambda tf: tf.nn.fused_batch_norm(
            _NHWC, _SCALE, _OFFSET, exponential_avg_factor=0.5
        ),
    },
    error=("Both `mean` and `variance` must be a 1D tensor",),
)
family(
    "bn_error_dtype",
    {
        "float64": lambda tf: tf.nn.fused_batch_norm(_NHWC.astype(np.float64), _SCALE, _OFFSET),
        "int32": lambda tf: tf.nn.fused_batch_norm(_NHWC.astype(np.int32), _SCALE, _OFFSET),
        "float16_scale": lambda tf: tf.nn.fused_batch_norm(
            _NHWC.astype(np.float16), np.float16(_SCALE), np.float16(_OFFSET)
        ),
    },
    error=("not in list of allowed values",),
)
family(
    "bn_error_misc",
    {
        "data_format": lambda tf: tf.nn.fused_batch_norm(
            _NHWC, _SCALE, _OFFSET, data_format="HWCN"
        ),
    },
    error=("Attr 'data_format' of 'FusedBatchNormV3' Op passed string 'HWCN' not in",),
)
family(
    "bn_error_runtime",
    {"scale_size": _wrong_scale},
    error=("scale must have the same number of elements as the channels of x, got 3 and 4",),
)
family(
    "bn_error_layer",
    {
        "undefined_channels": lambda tf: tf.layers.batch_normalization(
            tf.placeholder(tf.float32, [2, 3, 3, None]), training=True
        ),
    },
    error=("Input has undefined `axis` dimension",),
)
family(
    "bn_error_layer_axis",
    {
        "out_of_range": lambda tf: tf.layers.batch_normalization(
            tf.placeholder(tf.float32, [2, 4]), axis=2
        ),
    },
    error=("Invalid value for `axis` argument",),
)
