"""Conformance programs: activations, elementwise math and normalization without fusing (issue
24, items 2 and 3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.harness import Run, program
from conformance.programs import family

__all__: list[str] = []

# Both sides of every kink and saturation: negatives large and small, 0, the 6 of relu6, and
# values whose exp overflows float32 (softplus and the logistic loss must stay finite).
_X = [-100.0, -10.0, -2.0, -0.5, 0.0, 0.5, 2.0, 6.0, 7.0, 100.0]
_POSITIVE = [0.0, 0.25, 1.0, 4.0, 100.0, 1e-8]
_MATRIX = [[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]]


def _gelu(tf: Any) -> Callable[..., Any]:
    """``nn.gelu`` is TF 2's (``tf.compat.v1.nn`` lacks it); placeviz has it as ``pv.nn.gelu``."""
    return tf.nn.gelu if hasattr(tf.nn, "gelu") else tf.compat.v2.nn.gelu


def _of(fn: Callable[[Any, Any], Any], values: Any, dtype: str = "float32") -> Any:
    return lambda tf: fn(tf, tf.constant(np.array(values, dtype=dtype)))


family(
    "act",
    {
        "rsqrt": _of(lambda tf, x: tf.rsqrt(x), [0.25, 1.0, 4.0, 100.0, 0.0, -1.0]),
        "rsqrt_float64": _of(lambda tf, x: tf.rsqrt(x), [0.25, 2.0, 1e-300], "float64"),
        "rsqrt_list": lambda tf: tf.rsqrt([4.0, 16.0]),
        "math_rsqrt": _of(lambda tf, x: tf.math.rsqrt(x), [4.0]),
        "squared_difference": lambda tf: tf.squared_difference(
            tf.constant([1.0, -2.0, 3.0]), tf.constant([4.0, 2.0, 3.0])
        ),
        "squared_difference_scalar": _of(lambda tf, x: tf.squared_difference(x, 1.0), _X),
        "squared_difference_ints": lambda tf: tf.math.squared_difference(
            tf.constant([[1, 5]]), tf.constant([[3], [-2]])
        ),
        "softplus": _of(lambda tf, x: tf.nn.softplus(x), _X),
        "softplus_float64": _of(lambda tf, x: tf.nn.softplus(x), [-800.0, 0.0, 800.0], "float64"),
        "math_softplus": _of(lambda tf, x: tf.math.softplus(x, name="sp"), [1.0]),
        "elu": _of(lambda tf, x: tf.nn.elu(x), _X),
        "elu_list": lambda tf: tf.nn.elu([-1.0, 7.0]),
        "selu": _of(lambda tf, x: tf.nn.selu(x), _X),
        "selu_float64": _of(lambda tf, x: tf.nn.selu(x), [-1.0, 1.0], "float64"),
        "leaky_relu": _of(lambda tf, x: tf.nn.leaky_relu(x), _X),
        "leaky_relu_alpha": _of(lambda tf, x: tf.nn.leaky_relu(x, alpha=0.5, name="lr"), _X),
        "leaky_relu_float64_alpha": _of(
            lambda tf, x: tf.nn.leaky_relu(x, alpha=0.1), [-1.0, 3.0], "float64"
        ),
        "leaky_relu_ints": lambda tf: tf.nn.leaky_relu(tf.constant([3, -5])),
        "leaky_relu_list": lambda tf: tf.nn.leaky_relu([-1.0, 2.0]),
        "relu6": _of(lambda tf, x: tf.nn.relu6(x), _X),
        "relu6_ints": lambda tf: tf.nn.relu6(tf.constant([-3, 2, 9], dtype=tf.int64)),
        "relu6_float16": _of(lambda tf, x: tf.nn.relu6(x), [-1.0, 3.5, 6.5], "float16"),
        "erf": _of(lambda tf, x: tf.erf(x), [-3.0, -1.0, -0.5, 0.0, 1e-4, 0.5, 0.99, 1.5, 6.0]),
        "erf_float64": _of(lambda tf, x: tf.math.erf(x), [-2.5, 0.1, 1.0, 4.0], "float64"),
        "erfc": _of(lambda tf, x: tf.math.erfc(x), [-2.0, 0.0, 0.5, 2.0, 5.0, 9.0]),
        "log1p": _of(lambda tf, x: tf.log1p(x), [-1.0, -0.5, 0.0, 1e-7, 1.0, 1e6, -2.0]),
        "log1p_list": lambda tf: tf.math.log1p([1.0]),
        "not_equal": lambda tf: tf.not_equal(tf.constant([1.0, 2.0, 3.0]), 2.0),
        "not_equal_strings": lambda tf: tf.math.not_equal(tf.constant(["a", "b"]), "a"),
        "not_equal_broadcast": lambda tf: tf.not_equal(
            tf.constant([[1, 2]]), tf.constant([[1], [2]])
        ),
        "comparisons": lambda tf: [
            op(tf.constant([1, 2, 3]), tf.constant([2, 2, 2]))
            for op in (
                tf.equal,
                tf.not_equal,
                tf.less,
                tf.less_equal,
                tf.greater,
                tf.greater_equal,
            )
        ],
        "gelu": _of(lambda tf, x: _gelu(tf)(x), _X),
        "gelu_approximate": _of(lambda tf, x: _gelu(tf)(x, approximate=True), _X),
        "gelu_float64_approximate": _of(
            lambda tf, x: _gelu(tf)(x, approximate=True, name="g"), [-1.0, 1.0], "float64"
        ),
        "gelu_float16": _of(lambda tf, x: _gelu(tf)(x), [-1.0, 1.0], "float16"),
        "sigmoid_cross_entropy": lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.constant([0.0, 1.0, 0.5, 1.0, 0.0]),
            logits=tf.constant([-2.0, 0.0, 3.0, -100.0, 100.0]),
        ),
        "sigmoid_cross_entropy_lists": lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(
            labels=[[1.0, 0.0]], logits=[[1.0, 2.0]], name="xe"
        ),
        "moments": lambda tf: tf.nn.moments(tf.constant(_MATRIX), axes=[0]),
        "moments_keep_dims": lambda tf: tf.nn.moments(
            tf.constant(_MATRIX), axes=[0, 1], keep_dims=True
        ),
        "moments_keepdims": lambda tf: tf.nn.moments(tf.constant(_MATRIX), [1], keepdims=True),
        "moments_scalar_axis": lambda tf: tf.nn.moments(tf.constant([1.0, 2.0]), axes=0),
        "moments_negative_axis": lambda tf: tf.nn.moments(tf.constant(_MATRIX), axes=[-1]),
        "moments_float16": lambda tf: tf.nn.moments(
            tf.constant([1.0, 2.0, 4.0], dtype=tf.float16), axes=[0], name="m16"
        ),
        "moments_ints": lambda tf: tf.nn.moments(tf.constant([[1, 2], [4, 7]]), axes=[0]),
        "moments_shift": lambda tf: tf.nn.moments(tf.constant(_MATRIX), axes=[1], shift=2.0),
        "batch_normalization": lambda tf: tf.nn.batch_normalization(
            tf.constant(_MATRIX),
            tf.constant([1.0, 2.0, 3.0]),
            tf.constant([1.0, 1.0, 4.0]),
            tf.constant([0.0, 1.0, 0.0]),
            tf.constant([1.0, 2.0, 0.5]),
            1e-3,
        ),
        "batch_normalization_no_offset_scale": lambda tf: tf.nn.batch_normalization(
            tf.constant(_MATRIX),
            tf.constant([1.0, 2.0, 3.0]),
            tf.constant([1.0, 1.0, 4.0]),
            None,
            None,
            1e-3,
            name="bn",
        ),
        "batch_normalization_float16": lambda tf: tf.nn.batch_normalization(
            tf.constant([1.0, 3.0], dtype=tf.float16),
            tf.constant([1.0, 1.0]),
            tf.constant([1.0, 4.0]),
            tf.constant([0.5, 0.5]),
            None,
            0.1,
        ),
        "l2_normalize": lambda tf: tf.nn.l2_normalize(tf.constant(_MATRIX), axis=1),
        "l2_normalize_dim": lambda tf: tf.nn.l2_normalize(
            tf.constant(_MATRIX), dim=0, epsilon=1e-3
        ),
        "l2_normalize_all": lambda tf: tf.nn.l2_normalize(tf.constant(_MATRIX)),
        "l2_normalize_axes": lambda tf: tf.math.l2_normalize([[3.0, 4.0]], axis=[0, 1]),
        "l2_normalize_zeros": lambda tf: tf.nn.l2_normalize(tf.constant([0.0, 0.0]), 0),
        "xw_plus_b": lambda tf: tf.nn.xw_plus_b(
            tf.constant(_MATRIX), tf.constant([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]]), [1.0, -2.0]
        ),
        "xw_plus_b_named": lambda tf: tf.nn.xw_plus_b(
            [[1.0, 2.0]], [[3.0], [4.0]], [0.5], name="logits"
        ),
        "scalars": lambda tf: [
            tf.squared_difference(tf.constant(1.0), 3.0),
            tf.rsqrt(4.0),
            tf.erf(0.5),
            tf.nn.elu(-1.0),
            tf.nn.relu6(7),
            tf.nn.softplus(0.0),
            tf.log1p(1.0),
            tf.nn.l2_normalize(3.0),
        ],
    },
)


@program
def act_moments_placeholder(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3])
    mean, variance = tf.nn.moments(x, axes=[0])
    return Run([mean, variance], {x: np.array(_MATRIX, dtype=np.float32)})


@program
def act_sigmoid_cross_entropy_placeholders(tf: Any) -> Any:
    labels = tf.placeholder(tf.float32, [None])
    logits = tf.placeholder(tf.float32, [None])
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    feed = {labels: np.array([1.0, 0.0], np.float32), logits: np.array([0.5, -3.0], np.float32)}
    return Run(loss, feed)


@program
def act_moments_unknown_rank(tf: Any) -> Any:
    x = tf.placeholder(tf.float32)
    mean, variance = tf.nn.moments(x, axes=[0], keep_dims=False)
    return Run([mean, variance], {x: np.array(_MATRIX, dtype=np.float32)})


@program
def act_l2_normalize_placeholder(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3])
    return Run(tf.nn.l2_normalize(x, axis=-1), {x: np.array(_MATRIX, dtype=np.float32)})


@program
def act_gelu_placeholder(tf: Any) -> Any:
    x = tf.placeholder(tf.float64, [None])
    return Run(_gelu(tf)(x, approximate=True), {x: np.array([-1.0, 0.0, 2.0])})


# -- gradients -----------------------------------------------------------------------------------


def _gradient(fn: Callable[[Any, Any], Any], values: Any = _X) -> Any:
    def build(tf: Any) -> Any:
        x = tf.constant(np.array(values, dtype=np.float32))
        return tf.gradients(fn(tf, x), x)

    return build


family(
    "act_grad",
    {
        "rsqrt": _gradient(lambda tf, x: tf.rsqrt(x), [0.25, 1.0, 4.0]),
        "softplus": _gradient(lambda tf, x: tf.nn.softplus(x)),
        "elu": _gradient(lambda tf, x: tf.nn.elu(x)),
        "selu": _gradient(lambda tf, x: tf.nn.selu(x)),
        "leaky_relu": _gradient(lambda tf, x: tf.nn.leaky_relu(x, alpha=0.3)),
        "relu6": _gradient(lambda tf, x: tf.nn.relu6(x)),
        "erf": _gradient(lambda tf, x: tf.erf(x), [-2.0, 0.0, 0.5, 3.0]),
        "erfc": _gradient(lambda tf, x: tf.math.erfc(x), [-2.0, 0.0, 0.5, 3.0]),
        "log1p": _gradient(lambda tf, x: tf.log1p(x), [-0.5, 0.0, 3.0]),
        "squared_difference": _gradient(
            lambda tf, x: tf.squared_difference(x, tf.constant([1.0, 2.0, 3.0])), [0.0, 2.0, 5.0]
        ),
        "squared_difference_broadcast": _gradient(
            lambda tf, x: tf.squared_difference(x, 1.0), [0.0, 2.0, 5.0]
        ),
        "gelu": _gradient(lambda tf, x: _gelu(tf)(x), [-2.0, 0.0, 0.5, 3.0]),
        "gelu_approximate": _gradient(
            lambda tf, x: _gelu(tf)(x, approximate=True), [-2.0, 0.0, 0.5, 3.0]
        ),
        "l2_normalize": _gradient(lambda tf, x: tf.nn.l2_normalize(x) * [1.0, 2.0], [3.0, 4.0]),
    },
)


@program
def act_grad_squared_difference_both(tf: Any) -> Any:
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = tf.constant([0.5, -1.0])
    return tf.gradients(tf.squared_difference(x, y), [x, y])


@program
def act_grad_sigmoid_cross_entropy(tf: Any) -> Any:
    labels = tf.constant([0.0, 1.0, 0.25])
    logits = tf.constant([-2.0, 0.0, 3.0])
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    return tf.gradients(tf.reduce_sum(loss), [logits, labels])


@program
def act_grad_moments(tf: Any) -> Any:
    x = tf.constant(_MATRIX)
    mean, variance = tf.nn.moments(x, axes=[0])
    return tf.gradients(tf.reduce_sum(mean * 2.0 + variance), x)


@program
def act_grad_batch_normalization(tf: Any) -> Any:
    x = tf.constant(_MATRIX)
    mean, variance = tf.nn.moments(x, axes=[0])
    offset, scale = tf.constant([0.0, 1.0, 2.0]), tf.constant([1.0, 2.0, 3.0])
    y = tf.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    return tf.gradients(tf.reduce_sum(y * y), [x, offset, scale])


def _normalized_batch_gradients(tf: Any) -> Any:
    """A training step's normalization: batch statistics of a batch of unknown size."""
    x = tf.placeholder(tf.float32, [None, 3])
    mean, variance = tf.nn.moments(x, axes=[0])
    offset, scale = tf.constant([0.0, 1.0, 2.0]), tf.constant([1.0, 2.0, 3.0])
    y = tf.nn.relu6(tf.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3))
    grads = tf.gradients(tf.reduce_mean(y), [x, offset, scale])
    return Run(grads, {x: np.array([*_MATRIX, [0.0, -1.0, 5.0]], dtype=np.float32)})


# The graph differs where Mean's gradient meets a partly known shape (KNOWN_DIFFERENCES); the
# values are compared on their own.
program(_normalized_batch_gradients, name="act_grad_batch_normalization_placeholder")
program(
    _normalized_batch_gradients,
    name="act_grad_batch_normalization_placeholder_values",
    skip=("graph", "assigned"),
)


# -- placement ----------------------------------------------------------------------------------


@program(cpus=2)
def act_pinned_to_cpu1(tf: Any) -> Any:
    x = tf.constant([-1.0, 0.5, 8.0])
    with tf.device("/cpu:1"):
        y = tf.nn.elu(x) + tf.nn.relu6(x)
        z = tf.squared_difference(y, 1.0)
    return [z, tf.gradients(tf.reduce_sum(z), x)[0]]


# -- errors --------------------------------------------------------------------------------------


@program(error=["int32"])
def act_error_rsqrt_int(tf: Any) -> Any:
    return tf.rsqrt(tf.constant([4]))


@program(error=["int64"])
def act_error_elu_int(tf: Any) -> Any:
    return tf.nn.elu(tf.constant([1], dtype=tf.int64))


@program(error=["int32"])
def act_error_softplus_int(tf: Any) -> Any:
    return tf.nn.softplus(tf.constant([1]))


@program(error=["int32"])
def act_error_erf_int(tf: Any) -> Any:
    return tf.erf(tf.constant([1]))


@program(error=["string"])
def act_error_relu6_string(tf: Any) -> Any:
    return tf.nn.relu6(tf.constant(["a"]))


@program(error=["string"])
def act_error_less_strings(tf: Any) -> Any:
    return tf.less(tf.constant(["a"]), tf.constant(["b"]))


@program(error=["Input 'y' of 'SquaredDifference' Op has type int32", "float32"])
def act_error_squared_difference_dtypes(tf: Any) -> Any:
    return tf.squared_difference(tf.constant([1.0]), tf.constant([1]))


@program(error=["Dimensions must be equal"])
def act_error_squared_difference_shapes(tf: Any) -> Any:
    return tf.squared_difference(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))


@program(error=["Input 'y' of 'NotEqual' Op has type int32", "float32"])
def act_error_not_equal_dtypes(tf: Any) -> Any:
    return tf.not_equal(tf.constant([1.0]), tf.constant([1]))


@program(error=["Invalid reduction dimension 2 for input with 2 dimensions"])
def act_error_moments_bad_axis(tf: Any) -> Any:
    return tf.nn.moments(tf.constant(_MATRIX), axes=[2])


@program(error=["Invalid reduction dimension -2 for input with 1 dimensions"])
def act_error_moments_bad_negative_axis(tf: Any) -> Any:
    return tf.nn.moments(tf.constant([1.0, 2.0]), axes=[-2])


@program(error=["Cannot specify both 'keep_dims' and 'keepdims'."])
def act_error_moments_both_keepdims(tf: Any) -> Any:
    return tf.nn.moments(tf.constant([1.0]), axes=[0], keep_dims=True, keepdims=True)


@program(error=["Cannot specify both 'dim' and 'axis'."])
def act_error_l2_normalize_axis_and_dim(tf: Any) -> Any:
    return tf.nn.l2_normalize(tf.constant([1.0]), axis=0, dim=0)


@program(error=["Invalid reduction dimension 2 for input with 2 dimensions"])
def act_error_l2_normalize_bad_axis(tf: Any) -> Any:
    return tf.nn.l2_normalize(tf.constant(_MATRIX), axis=2)


@program(error=["`features.dtype` must be a floating point tensor.", "int32"])
def act_error_gelu_int(tf: Any) -> Any:
    return _gelu(tf)(tf.constant([1]))


@program(error=["`logits` and `labels` must have the same shape, received ((3,) vs (2,))."])
def act_error_sigmoid_cross_entropy_shapes(tf: Any) -> Any:
    return tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.constant([1.0, 0.0]), logits=tf.constant([1.0, 2.0, 3.0])
    )


@program(error=["Both `labels` and `logits` must be provided"])
def act_error_sigmoid_cross_entropy_no_logits(tf: Any) -> Any:
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([1.0]))


@program(error=["Input 'y' of 'Mul' Op has type int32 that does not match type float32"])
def act_error_sigmoid_cross_entropy_int_labels(tf: Any) -> Any:
    return tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.constant([1, 0]), logits=tf.constant([1.0, 2.0])
    )


# -- second derivatives --------------------------------------------------------------------------


def _second_gradient(fn: Callable[[Any, Any], Any], values: Any) -> Any:
    def build(tf: Any) -> Any:
        x = tf.constant(np.array(values, dtype=np.float32))
        first = tf.gradients(fn(tf, x), x)[0]
        return tf.gradients(first * first, x)

    return build


family(
    "act_grad2",
    {
        "elu": _second_gradient(lambda tf, x: tf.nn.elu(x), [-2.0, -0.5, 0.5, 3.0]),
        "selu": _second_gradient(lambda tf, x: tf.nn.selu(x), [-2.0, -0.5, 0.5, 3.0]),
        "relu6": _second_gradient(lambda tf, x: tf.nn.relu6(x), [-2.0, 0.5, 7.0]),
        "leaky_relu": _second_gradient(lambda tf, x: tf.nn.leaky_relu(x, alpha=0.3), [-2.0, 0.5]),
        "rsqrt": _second_gradient(lambda tf, x: tf.rsqrt(x), [0.25, 1.0, 4.0]),
    },
)


def _select_v2_gradients(tf: Any, x_values: Any, y_values: Any, mask: Any) -> Any:
    x = tf.constant(np.array(x_values, dtype=np.float32))
    y = tf.constant(np.array(y_values, dtype=np.float32))
    chosen = tf.where_v2(tf.constant(mask), x, y) if hasattr(tf, "where_v2") else None
    if chosen is None:  # placeviz's where is TF 2's (SelectV2)
        chosen = tf.where(tf.constant(mask), x, y)
    return tf.gradients(tf.reduce_sum(chosen * chosen), [x, y])


family(
    "act_select_v2_grad",
    {
        "same_shapes": lambda tf: _select_v2_gradients(
            tf, _MATRIX, [[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]], [[True, False, True]] * 2
        ),
        "y_broadcast": lambda tf: _select_v2_gradients(
            tf, _MATRIX, [10.0, 20.0, 30.0], [[True, False, True], [False, True, True]]
        ),
        "x_scalar": lambda tf: _select_v2_gradients(
            tf, 2.0, _MATRIX, [[True, False, True], [False, True, False]]
        ),
    },
)


@program
def act_sparse_cross_entropy_named(tf: Any) -> Any:
    logits = tf.constant(np.array(_MATRIX, dtype=np.float32))
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([2, 0]), logits=logits, name="per_example"
    )
    return Run([loss, tf.gradients(tf.reduce_mean(loss), logits)])


family(
    "act_operand_conversion",
    {
        # NumPy defers to the tensor: one Mul op, not an array of ops.
        "numpy_array_times_tensor": lambda tf: (
            np.array([2.0, 3.0], dtype=np.float32) * tf.constant([4.0, 5.0])
        ),
        "numpy_scalar_times_tensor": lambda tf: np.float32(2.0) * tf.constant([4.0, 5.0]),
    },
)
program(
    lambda tf: tf.constant(2.0, dtype=tf.int32),
    name="act_operand_conversion_whole_float_to_int",
    error=("Expected int32, but got 2.0 of type 'float'",),
)
program(
    lambda tf: tf.constant(1) + 2.5,
    name="act_operand_conversion_int_plus_float",
    error=("Input 'y' of 'AddV2' Op has type float32 that does not match type int32",),
)


@program
def act_where_v2_names_python_values(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0, 3.0], name="x")
    return tf.where_v2(x > 1.5, 0.5, x, name="picked")
