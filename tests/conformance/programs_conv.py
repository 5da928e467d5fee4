"""Conformance programs: convolution and pooling (issue 24, item 1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Run, Runs, program
from conformance.programs import family

__all__: list[str] = []


def _t(tf: Any, *shape: int, dtype: Any = np.float32, fn: Any = np.sin) -> Any:
    """A deterministic tensor of distinct values (sin or cos of 0, 1, 2...)."""
    return tf.constant(fn(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape).astype(dtype))


def _ints(tf: Any, *shape: int, dtype: Any = np.int32) -> Any:
    """Small integers, exact in every dtype's arithmetic."""
    return tf.constant((np.arange(np.prod(shape)) * 7 % 5 - 2).reshape(shape).astype(dtype))


def _x(tf: Any) -> Any:
    return _t(tf, 1, 5, 5, 2, fn=np.sin)


def _w(tf: Any, *shape: int) -> Any:
    return _t(tf, *(shape or (3, 3, 2, 2)), fn=np.cos)


def _conv(tf: Any, strides: Any, padding: Any, **kwargs: Any) -> Any:
    return tf.nn.conv2d(_x(tf), _w(tf), strides=strides, padding=padding, **kwargs)


# -- values --------------------------------------------------------------------------------------
family(
    "conv_conv2d",
    {
        "same_stride1": lambda tf: _conv(tf, [1, 1, 1, 1], "SAME"),
        "valid_stride1": lambda tf: _conv(tf, 1, "VALID"),
        "same_stride2": lambda tf: _conv(tf, [1, 2, 2, 1], "SAME"),
        "valid_stride2": lambda tf: _conv(tf, 2, "VALID"),
        "strides_1_2": lambda tf: _conv(tf, [1, 2], "SAME"),
        "dilated_valid": lambda tf: _conv(tf, 1, "VALID", dilations=2),
        "dilated_same": lambda tf: _conv(tf, 1, "SAME", dilations=[1, 2, 2, 1]),
        "explicit_padding": lambda tf: _conv(tf, 1, [[0, 0], [1, 2], [0, 1], [0, 0]]),
        "grouped": lambda tf: tf.nn.conv2d(_t(tf, 1, 5, 5, 4), _w(tf, 3, 3, 2, 4), 1, "SAME"),
        "tf1_argument_names": lambda tf: tf.nn.conv2d(
            input=_x(tf),
            filters=_w(tf),
            strides=[1, 1, 1, 1],
            padding="SAME",
            use_cudnn_on_gpu=False,
            data_format="NHWC",
            dilations=[1, 1, 1, 1],
            name="my_conv",
        ),
        "filter_argument": lambda tf: tf.nn.conv2d(
            _x(tf), filter=_w(tf), strides=1, padding="VALID"
        ),
        "nchw": lambda tf: tf.nn.conv2d(
            _t(tf, 1, 2, 5, 5), _w(tf), [1, 1, 2, 2], "SAME", data_format="NCHW"
        ),
        "float64": lambda tf: tf.nn.conv2d(
            _t(tf, 1, 5, 5, 2, dtype=np.float64), _t(tf, 3, 3, 2, 2, dtype=np.float64), 1, "SAME"
        ),
        "float16": lambda tf: tf.nn.conv2d(
            _ints(tf, 1, 4, 4, 2, dtype=np.float16),
            _ints(tf, 2, 2, 2, 3, dtype=np.float16),
            1,
            "SAME",
        ),
        "int32": lambda tf: tf.nn.conv2d(_ints(tf, 1, 4, 4, 2), _ints(tf, 2, 2, 2, 3), 1, "VALID"),
        "numpy_operands": lambda tf: tf.nn.conv2d(
            np.ones((1, 3, 3, 1), np.float32), np.ones((2, 2, 1, 1), np.float32), 1, "VALID"
        ),
        "backprop_input": lambda tf: tf.nn.conv2d_backprop_input(
            [1, 5, 5, 2], _w(tf), _t(tf, 1, 3, 3, 2), [1, 2, 2, 1], "SAME"
        ),
        "backprop_filter": lambda tf: tf.nn.conv2d_backprop_filter(
            _x(tf), [3, 3, 2, 2], _t(tf, 1, 2, 2, 2), [1, 2, 2, 1], "VALID", name="dw"
        ),
        "transpose_same": lambda tf: tf.nn.conv2d_transpose(
            _t(tf, 1, 3, 3, 2), _w(tf), [1, 6, 6, 2], [1, 2, 2, 1], "SAME"
        ),
        "transpose_valid": lambda tf: tf.nn.conv2d_transpose(
            _t(tf, 1, 2, 2, 2), _w(tf), [1, 5, 5, 2], 2, "VALID", name="up"
        ),
    },
)


@program
def conv_conv2d_placeholder_batch(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 5, 5, 2], name="x")
    y = tf.nn.conv2d(x, _w(tf), 2, "SAME")
    feed = np.sin(np.arange(100)).reshape(2, 5, 5, 2).astype(np.float32)
    return Run(y, {x: feed})


family(
    "conv_depthwise",
    {
        "same": lambda tf: tf.nn.depthwise_conv2d(_x(tf), _w(tf), [1, 1, 1, 1], "SAME"),
        "valid_stride2": lambda tf: tf.nn.depthwise_conv2d(_x(tf), _w(tf), [1, 2, 2, 1], "VALID"),
        "multiplier3": lambda tf: tf.nn.depthwise_conv2d(
            _x(tf), _w(tf, 2, 2, 2, 3), [1, 1, 2, 1], "SAME", name="dw"
        ),
        "native": lambda tf: tf.nn.depthwise_conv2d_native(_x(tf), _w(tf), [1, 1, 1, 1], "VALID"),
    },
)

family(
    "conv_pool",
    {
        "max_valid_2x2": lambda tf: tf.nn.max_pool(_x(tf), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        "max_same_3x3_stride2": lambda tf: tf.nn.max_pool(_x(tf), 3, 2, "SAME"),
        "max_same_2x3": lambda tf: tf.nn.max_pool(_x(tf), [2, 3], [1, 2], "SAME"),
        "max_pool2d": lambda tf: tf.nn.max_pool2d(_x(tf), 2, 1, "VALID"),
        "max_explicit_padding": lambda tf: tf.nn.max_pool(
            _x(tf), [2, 3], 1, [[0, 0], [1, 0], [0, 2], [0, 0]]
        ),
        "max_int32": lambda tf: tf.nn.max_pool(_ints(tf, 1, 4, 4, 2), 2, 2, "SAME"),
        "max_int64": lambda tf: tf.nn.max_pool(_ints(tf, 1, 4, 4, 2, dtype=np.int64), 2, 2, "SAME"),
        "max_nchw": lambda tf: tf.nn.max_pool(
            _t(tf, 1, 2, 5, 5), [1, 1, 2, 2], [1, 1, 2, 2], "SAME", data_format="NCHW"
        ),
        "max_input_argument": lambda tf: tf.nn.max_pool(
            input=_x(tf), ksize=2, strides=2, padding="VALID", name="pool"
        ),
        "avg_pool2d": lambda tf: tf.nn.avg_pool2d(_x(tf), 2, [1, 2], "SAME"),
        "avg_same": lambda tf: tf.nn.avg_pool(_x(tf), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
        "avg_valid_stride1": lambda tf: tf.nn.avg_pool(_x(tf), 2, 1, "VALID"),
        "avg_nchw": lambda tf: tf.nn.avg_pool(_t(tf, 1, 2, 5, 5), 2, 2, "SAME", data_format="NCHW"),
        "avg_float64": lambda tf: tf.nn.avg_pool(
            _t(tf, 1, 4, 4, 1, dtype=np.float64), 2, 2, "SAME"
        ),
    },
)

family(
    "conv_lrn",
    {
        "defaults": lambda tf: tf.nn.lrn(_x(tf)),
        "params": lambda tf: tf.nn.lrn(
            _t(tf, 1, 2, 2, 6), depth_radius=2, bias=2.0, alpha=0.5, beta=0.75
        ),
        "alias": lambda tf: tf.nn.local_response_normalization(
            _t(tf, 1, 2, 2, 4), depth_radius=1, name="norm"
        ),
        "float16": lambda tf: tf.nn.lrn(_ints(tf, 1, 2, 2, 3, dtype=np.float16), 1, 1.0, 1.0, 1.0),
    },
)

family(
    "conv_bias_add",
    {
        "nhwc": lambda tf: tf.nn.bias_add(_x(tf), tf.constant([1.0, -1.0])),
        "nchw": lambda tf: tf.nn.bias_add(
            _t(tf, 1, 2, 3, 3), tf.constant([1.0, -1.0]), data_format="NCHW"
        ),
        "n_dots_c": lambda tf: tf.nn.bias_add(_x(tf), tf.constant([1.0, 2.0]), "N...C"),
        "nc_dots": lambda tf: tf.nn.bias_add(
            _t(tf, 2, 3, 4), tf.constant([1.0, 2.0, 3.0]), "NC..."
        ),
    },
)


family(
    "conv_dilated",
    {
        "convolution_valid": lambda tf: tf.nn.convolution(
            _t(tf, 1, 7, 6, 2), _w(tf), "VALID", dilation_rate=[2, 2]
        ),
        "convolution_same": lambda tf: tf.nn.convolution(
            _t(tf, 1, 7, 6, 2), _w(tf), "SAME", dilation_rate=[2, 3], name="dil"
        ),
        "convolution_undilated": lambda tf: tf.nn.convolution(_x(tf), _w(tf), "SAME", strides=2),
        "convolution_nchw": lambda tf: tf.nn.convolution(
            _t(tf, 1, 2, 6, 7), _w(tf), "SAME", dilation_rate=2, data_format="NCHW"
        ),
        "atrous_conv2d": lambda tf: tf.nn.atrous_conv2d(_t(tf, 1, 6, 6, 2), _w(tf), 2, "SAME"),
        "depthwise_rate2_same": lambda tf: tf.nn.depthwise_conv2d(
            _t(tf, 1, 7, 6, 2), _w(tf, 3, 3, 2, 1), [1, 1, 1, 1], "SAME", rate=[2, 2]
        ),
        "depthwise_rate_valid": lambda tf: tf.nn.depthwise_conv2d(
            _t(tf, 2, 7, 7, 2), _w(tf, 2, 2, 2, 2), [1, 1, 1, 1], "VALID", dilations=[3, 2]
        ),
    },
)


@program
def conv_space_to_batch_nd_round_trip(tf: Any) -> Any:
    x = _t(tf, 2, 5, 4, 3)
    s = tf.space_to_batch_nd(x, [2, 3], [[1, 0], [1, 1]])
    b = tf.batch_to_space_nd(s, [2, 3], [[1, 0], [1, 1]], name="back")
    return [s, b, tf.gradients(tf.reduce_sum(b * b), x)]


@program
def conv_dilated_placeholder_batch_gradients(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 7, 6, 2], name="x")
    w = _w(tf)
    y = tf.nn.depthwise_conv2d(x, _w(tf, 3, 3, 2, 1), [1, 1, 1, 1], "SAME", rate=[2, 2])
    z = tf.nn.convolution(y, w, "SAME", dilation_rate=[2, 2])
    grads = tf.gradients(tf.reduce_sum(z * z), [x, w])
    return Run(grads, {x: np.sin(np.arange(168)).reshape(2, 7, 6, 2).astype(np.float32)})


@program(error=("`strides > 1` not supported in conjunction with `dilation_rate > 1`",))
def conv_dilated_error_strides(tf: Any) -> Any:
    return tf.nn.convolution(_t(tf, 1, 7, 6, 2), _w(tf), "SAME", strides=2, dilation_rate=2)


# -- gradients -----------------------------------------------------------------------------------
def _grads(tf: Any, y: Any, *xs: Any) -> Any:
    weights = tf.constant(
        np.cos(np.arange(y.shape.num_elements())).reshape(y.shape.as_list()).astype(np.float32)
    )
    return tf.gradients(tf.reduce_sum(y * weights), list(xs))


@program
def conv_grad_conv2d_same_stride2(tf: Any) -> Any:
    x, w = _x(tf), _w(tf)
    return _grads(tf, tf.nn.conv2d(x, w, 2, "SAME"), x, w)


@program
def conv_grad_conv2d_valid_dilated(tf: Any) -> Any:
    x, w = _t(tf, 1, 6, 6, 2), _w(tf, 2, 2, 2, 3)
    return _grads(tf, tf.nn.conv2d(x, w, 1, "VALID", dilations=2), x, w)


@program
def conv_grad_conv2d_explicit_padding(tf: Any) -> Any:
    x, w = _x(tf), _w(tf)
    return _grads(tf, tf.nn.conv2d(x, w, [1, 2], [[0, 0], [1, 0], [2, 1], [0, 0]]), x, w)


@program
def conv_grad_conv2d_nchw(tf: Any) -> Any:
    x, w = _t(tf, 1, 2, 5, 5), _w(tf)
    return _grads(tf, tf.nn.conv2d(x, w, 1, "SAME", data_format="NCHW"), x, w)


@program
def conv_grad_conv2d_grouped(tf: Any) -> Any:
    x, w = _t(tf, 1, 4, 4, 4), _w(tf, 3, 3, 2, 2)
    return _grads(tf, tf.nn.conv2d(x, w, 1, "SAME"), x, w)


@program
def conv_grad_conv2d_placeholder(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 5, 5, 2], name="x")
    w = _w(tf)
    grads = tf.gradients(tf.reduce_sum(tf.nn.conv2d(x, w, 1, "VALID")), [x, w])
    return Run(grads, {x: np.sin(np.arange(50)).reshape(1, 5, 5, 2).astype(np.float32)})


@program
def conv_grad_conv2d_transpose(tf: Any) -> Any:
    value, w = _t(tf, 1, 3, 3, 2), _w(tf, 3, 3, 3, 2)
    y = tf.nn.conv2d_transpose(value, w, [1, 6, 6, 3], [1, 2, 2, 1], "SAME")
    return _grads(tf, y, value, w)


@program
def conv_grad_second_order_filter(tf: Any) -> Any:
    x, w = _x(tf), _w(tf)
    (dw,) = tf.gradients(tf.reduce_sum(tf.nn.conv2d(x, w, 2, "VALID")), [w])
    return tf.gradients(tf.reduce_sum(dw * dw), [x])


@program
def conv_grad_depthwise(tf: Any) -> Any:
    x, w = _x(tf), _w(tf, 2, 2, 2, 2)
    return _grads(tf, tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"), x, w)


@program
def conv_grad_max_pool_valid(tf: Any) -> Any:
    x = _x(tf)
    return _grads(tf, tf.nn.max_pool(x, 2, 2, "VALID"), x)


@program
def conv_grad_max_pool_same_overlapping(tf: Any) -> Any:
    x = _x(tf)
    return _grads(tf, tf.nn.max_pool(x, 3, 1, "SAME"), x)


def _with_nans(tf: Any, dtype: Any) -> Any:
    """``_x`` with NaNs and -infs where TF's max pool passes them over: windows whose first
    element is NaN, that hold only NaNs and -infs, or -infs beside padding."""
    values = np.sin(np.arange(50, dtype=np.float64)).reshape(1, 5, 5, 2)
    for row, col in ((0, 0), (0, 1), (1, 0), (2, 2), (3, 4), (4, 3)):
        values[0, row, col, 0] = np.nan
    for row, col in ((1, 1), (0, 2), (4, 4), (3, 3)):
        values[0, row, col, 0] = -np.inf
    values[0, 2, 0, 1] = np.nan
    return tf.constant(values.astype(dtype))


@program
def conv_grad_max_pool_nans_and_infs(tf: Any) -> Any:
    """TF's CPU max pool: NaNs passed over, a window's first element kept unless a later one
    is greater, the lowest finite value for a window of NaNs and -infs."""
    results = []
    for dtype in (np.float32, np.float16, np.float64):
        x = _with_nans(tf, dtype)
        for y in (tf.nn.max_pool(x, 3, 1, "SAME"), tf.nn.max_pool(x, 2, 2, "VALID")):
            results += [y, *_grads(tf, y if dtype == np.float32 else tf.cast(y, tf.float32), x)]
    return results


@program
def conv_grad_avg_pool_same(tf: Any) -> Any:
    x = _x(tf)
    return _grads(tf, tf.nn.avg_pool(x, 3, 2, "SAME"), x)


@program
def conv_grad_avg_pool_valid(tf: Any) -> Any:
    x = _x(tf)
    return _grads(tf, tf.nn.avg_pool(x, [2, 3], 1, "VALID"), x)


@program
def conv_grad_lrn(tf: Any) -> Any:
    x = _t(tf, 1, 2, 2, 5)
    return _grads(tf, tf.nn.lrn(x, depth_radius=1, bias=1.5, alpha=0.3, beta=0.6), x)


@program
def conv_grad_bias_add_nchw(tf: Any) -> Any:
    x, b = _t(tf, 1, 2, 3, 3), tf.constant([0.5, -0.5])
    return _grads(tf, tf.nn.bias_add(x, b, data_format="NCHW"), x, b)


@program
def conv_grad_conv_relu_pool_chain(tf: Any) -> Any:
    x, w = _t(tf, 2, 6, 6, 2), _w(tf, 3, 3, 2, 4)
    y = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME")), 2, 2, "VALID")
    return tf.gradients(tf.reduce_mean(tf.square(y)), [w])


# -- placement ------------------------------------------------------------------------------------
@program(cpus=2)
def conv_pinned_to_cpu1(tf: Any) -> Any:
    x, w = _x(tf), _w(tf)
    with tf.device("/cpu:1"):
        y = tf.nn.conv2d(x, w, 1, "SAME", name="conv")
        p = tf.nn.max_pool(y, 2, 2, "VALID", name="pool")
    return p


@program(cpus=2)
def conv_pinned_to_cpu1_gradients(tf: Any) -> Any:
    x, w = _x(tf), _w(tf)
    with tf.device("/cpu:1"):
        y = tf.nn.avg_pool(tf.nn.conv2d(x, w, 2, "SAME"), 2, 1, "SAME")
    return tf.gradients(tf.reduce_sum(y), [x, w])


# -- layers ---------------------------------------------------------------------------------------
def _init_then(tf: Any, fetch: Any) -> Any:
    return Runs(Run(tf.global_variables_initializer()), Run(fetch))


@program
def conv_layers_conv2d(tf: Any) -> Any:
    x = _t(tf, 1, 5, 5, 2)
    y = tf.layers.conv2d(
        x,
        3,
        3,
        kernel_initializer=tf.constant_initializer(0.1),
        bias_initializer=tf.ones_initializer(),
    )
    return _init_then(tf, y)


@program
def conv_layers_conv2d_same_relu(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="x")
    y = tf.layers.conv2d(
        x,
        4,
        [3, 2],
        padding="same",
        activation=tf.nn.relu,
        kernel_initializer=tf.ones_initializer(),
    )
    feed = np.cos(np.arange(72)).reshape(1, 6, 6, 2).astype(np.float32)
    return Runs(Run(tf.global_variables_initializer()), Run(y, {x: feed}))


@program
def conv_layers_conv2d_no_bias_strided(tf: Any) -> Any:
    x = _t(tf, 1, 6, 6, 2)
    y = tf.layers.conv2d(
        x,
        2,
        2,
        strides=2,
        use_bias=False,
        name="c2",
        kernel_initializer=tf.constant_initializer(0.5),
    )
    return _init_then(tf, y)


@program(skip=("values",))
def conv_layers_conv2d_glorot_variables(tf: Any) -> Any:
    x = _t(tf, 1, 5, 5, 2)
    layer = tf.layers.Conv2D(8, 3, strides=2)
    y = layer(x)
    return _init_then(tf, [y, tf.shape(layer.kernel)])


@program
def conv_layers_conv2d_dilated(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 7, 6, 2], name="x")
    y = tf.layers.conv2d(
        x, 3, 3, dilation_rate=2, padding="same", kernel_initializer=tf.constant_initializer(0.3)
    )
    feed = np.cos(np.arange(84)).reshape(1, 7, 6, 2).astype(np.float32)
    return Runs(Run(tf.global_variables_initializer()), Run(y, {x: feed}))


@program
def conv_layers_conv2d_called_twice(tf: Any) -> Any:
    layer = tf.layers.Conv2D(2, 2, kernel_initializer=tf.constant_initializer(0.5), name="shared")
    a = layer(_t(tf, 1, 3, 3, 2))
    b = layer(_t(tf, 2, 4, 4, 2, fn=np.cos))
    return _init_then(tf, [a, b])


@program
def conv_layers_channels_first(tf: Any) -> Any:
    x = _t(tf, 1, 2, 6, 6)
    h = tf.layers.conv2d(
        x,
        3,
        3,
        padding="same",
        data_format="channels_first",
        kernel_initializer=tf.constant_initializer(0.25),
        bias_initializer=tf.constant_initializer(0.5),
    )
    h = tf.layers.max_pooling2d(h, 2, 2, data_format="channels_first")
    h = tf.layers.average_pooling2d(h, 2, 1, padding="same", data_format="channels_first")
    f = tf.layers.flatten(h, data_format="channels_first")
    return _init_then(tf, f)


@program
def conv_layers_pooling(tf: Any) -> Any:
    x = _t(tf, 1, 6, 6, 2)
    p = tf.layers.max_pooling2d(x, 2, 2)
    a = tf.layers.average_pooling2d(p, 2, 1, padding="same")
    m = tf.layers.MaxPooling2D([3, 3], [1, 1], name="mp")(x)
    return [p, a, m]


@program
def conv_layers_flatten(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 2, 3, 2], name="x")
    f = tf.layers.flatten(x)
    g = tf.layers.Flatten()(_t(tf, 2, 3, 4))
    return Run([f, g], {x: np.ones((2, 2, 3, 2), np.float32)})


@program
def conv_layers_flatten_unknown_dims(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, None, 3], name="x")
    b = tf.placeholder(tf.float32, [2, None], name="b")
    v = tf.placeholder(tf.float32, [4], name="v")
    f = [tf.layers.flatten(x), tf.layers.flatten(b), tf.layers.flatten(v)]
    feed = {x: np.ones((2, 2, 3)), b: np.ones((2, 5)), v: np.arange(4.0)}
    return Run(f, feed)


@program
def conv_layers_small_cnn_gradients(tf: Any) -> Any:
    x = _t(tf, 2, 6, 6, 1)
    h = tf.layers.conv2d(
        x,
        2,
        3,
        padding="same",
        activation=tf.nn.relu,
        kernel_initializer=tf.constant_initializer(0.2),
    )
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.flatten(h)
    logits = tf.layers.dense(h, 3, kernel_initializer=tf.constant_initializer(0.1))
    loss = tf.reduce_mean(tf.square(logits))
    grads = tf.gradients(loss, tf.trainable_variables())
    return _init_then(tf, grads)


# -- errors ---------------------------------------------------------------------------------------
_ERRORS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "rank3_input": (
        lambda tf: tf.nn.conv2d(_t(tf, 5, 5, 2), _w(tf), 1, "SAME"),
        ("Shape must be rank 4 but is rank 3",),
    ),
    "rank3_filter": (
        lambda tf: tf.nn.conv2d(_x(tf), _t(tf, 3, 3, 2), 1, "SAME"),
        ("Shape must be rank 4 but is rank 3",),
    ),
    "input_depth": (
        lambda tf: tf.nn.conv2d(_x(tf), _w(tf, 3, 3, 3, 2), 1, "SAME"),
        ("Depth of input (2) is not a multiple of input depth of filter (3)",),
    ),
    "output_groups": (
        lambda tf: tf.nn.conv2d(_t(tf, 1, 5, 5, 4), _w(tf, 3, 3, 2, 3), 1, "SAME"),
        ("Depth of output (3) is not a multiple of the number of groups (2)",),
    ),
    "padding_lowercase": (
        lambda tf: _conv(tf, 1, "same"),
        ("Attr 'padding' of 'Conv2D' Op passed string 'same' not in",),
    ),
    "padding_unknown": (lambda tf: _conv(tf, 1, "FULL"), ("passed string 'FULL' not in",)),
    "padding_list_length": (
        lambda tf: _conv(tf, 1, [[0, 0], [1, 1], [1, 1]]),
        ("When padding is a list, it must be of size 4",),
    ),
    "explicit_padding_batch": (
        lambda tf: _conv(tf, 1, [[1, 0], [1, 1], [1, 1], [0, 0]]),
        ("Nonzero explicit padding in the batch or depth dimensions is not supported",),
    ),
    "explicit_padding_negative": (
        lambda tf: _conv(tf, 1, [[0, 0], [-1, 1], [1, 1], [0, 0]]),
        ("All elements of explicit_paddings must be nonnegative",),
    ),
    "max_pool_explicit_depth": (
        lambda tf: tf.nn.max_pool(_x(tf), 2, 1, [[0, 0], [1, 1], [1, 1], [0, 1]]),
        ("Nonzero explicit padding in the batch or depth dimensions is not supported",),
    ),
    "max_pool_explicit_too_wide": (
        lambda tf: tf.nn.max_pool(_x(tf), 2, 1, [[0, 0], [1, 0], [0, 2], [0, 0]]),
        (),
    ),
    "layer_rank3": (
        lambda tf: tf.layers.conv2d(_t(tf, 5, 5, 2), 2, 3),
        ("is incompatible with the layer: expected min_ndim=4, found ndim=3",),
    ),
    "layer_padding": (
        lambda tf: tf.layers.conv2d(_x(tf), 2, 3, padding="full"),
        ("The `padding` argument must be a list/tuple or one of",),
    ),
    "layer_unknown_channels": (
        lambda tf: tf.layers.conv2d(tf.placeholder(tf.float32, [None, 5, 5, None]), 2, 3),
        ("The channel dimension of the inputs should be defined",),
    ),
    "strides_length": (
        lambda tf: _conv(tf, [1, 1, 1], "SAME"),
        ("strides should be of length 1, 2 or 4",),
    ),
    "data_format": (
        lambda tf: _conv(tf, 1, "SAME", data_format="NHCW"),
        ("Attr 'data_format' of 'Conv2D' Op passed string 'NHCW' not in",),
    ),
    "too_small_valid": (
        lambda tf: tf.nn.conv2d(_t(tf, 1, 2, 2, 2), _w(tf), 1, "VALID"),
        ("Negative dimension size caused by subtracting 3 from 2",),
    ),
    "int64": (
        lambda tf: tf.nn.conv2d(
            _ints(tf, 1, 4, 4, 2, dtype=np.int64), _ints(tf, 2, 2, 2, 2, dtype=np.int64), 1, "SAME"
        ),
        ("Value passed to parameter 'input' has DataType int64 not in list of allowed values",),
    ),
    "dtype_mismatch": (
        lambda tf: tf.nn.conv2d(_x(tf), _t(tf, 3, 3, 2, 2, dtype=np.float64), 1, "SAME"),
        ("Input 'filter' of 'Conv2D' Op has type float64 that does not match type float32",),
    ),
    "lrn_float64": (
        lambda tf: tf.nn.lrn(_t(tf, 1, 2, 2, 2, dtype=np.float64)),
        ("DataType float64 not in list of allowed values",),
    ),
    "lrn_rank3": (lambda tf: tf.nn.lrn(_t(tf, 2, 2, 2)), ("Shape must be rank 4 but is rank 3",)),
    "avg_pool_int32": (
        lambda tf: tf.nn.avg_pool(_ints(tf, 1, 4, 4, 1), 2, 2, "SAME"),
        ("Value passed to parameter 'value' has DataType int32 not in list of allowed values",),
    ),
    "depthwise_int32": (
        lambda tf: tf.nn.depthwise_conv2d(
            _ints(tf, 1, 4, 4, 2), _ints(tf, 2, 2, 2, 1), [1, 1, 1, 1], "SAME"
        ),
        ("DataType int32 not in list of allowed values",),
    ),
    "depthwise_channels": (
        lambda tf: tf.nn.depthwise_conv2d(_x(tf), _w(tf, 3, 3, 1, 2), [1, 1, 1, 1], "SAME"),
        ("Dimensions must be equal, but are 2 and 1",),
    ),
    "max_pool_rank3": (
        lambda tf: tf.nn.max_pool(_t(tf, 5, 5, 2), 2, 2, "SAME"),
        ("Shape must be rank 4 but is rank 3",),
    ),
    "max_pool_too_big": (
        lambda tf: tf.nn.max_pool(_x(tf), 6, 1, "VALID"),
        ("Negative dimension size caused by subtracting 6 from 5",),
    ),
    "bias_add_format": (
        lambda tf: tf.nn.bias_add(_x(tf), tf.constant([1.0, 2.0]), data_format="NHCW"),
        ("must be of the form `N...C` or `NC...`",),
    ),
    "bias_add_channels": (
        lambda tf: tf.nn.bias_add(_x(tf), tf.constant([1.0, 2.0]), data_format="NCHW"),
        ("Dimensions must be equal, but are 5 and 2",),
    ),
    "batch_stride": (
        lambda tf: _conv(tf, [2, 1, 1, 1], "SAME"),
        ("does not yet support strides in the batch and depth dimensions",),
    ),
    "pool_batch_window": (
        lambda tf: tf.nn.max_pool(_x(tf), [2, 2, 2, 1], [1, 1, 1, 1], "SAME"),
        ("Pooling is not yet supported on the batch dimension",),
    ),
    "transpose_depth": (
        lambda tf: tf.nn.conv2d_transpose(_x(tf), _w(tf), [1, 10, 10, 3], 2, "SAME"),
        ("input depth must be evenly divisible by filter depth: 3 vs 2",),
    ),
}
for _name, (_build, _words) in _ERRORS.items():
    program(_build, name=f"conv_error_{_name}", error=_words)


@program
def conv_train_small_cnn_steps(tf: Any) -> Any:
    x = _t(tf, 2, 6, 6, 1)
    labels = tf.constant([1, 0])
    h = tf.layers.conv2d(
        x, 2, 3, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.3)
    )
    h = tf.layers.flatten(tf.layers.average_pooling2d(h, 2, 2))
    logits = tf.layers.dense(h, 2, kernel_initializer=tf.constant_initializer(0.1))
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(
        Run(tf.global_variables_initializer()),
        Run(train),
        Run(train),
        Run([loss, tf.trainable_variables()]),
    )


@program(error=["Cannot specify both 'value' and 'input'."])
def conv_max_pool_value_and_input(tf: Any) -> Any:
    x = _x(tf)
    return tf.nn.max_pool(value=x, input=x, ksize=2, strides=2, padding="VALID")
