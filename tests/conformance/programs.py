"""The conformance programs: small TF1 programs, each run under ``tf.compat.v1`` and placeviz.

Every program is a function of the module (``tf``) that builds a graph in the default graph and
returns what to run (see ``harness``). Neither TensorFlow nor placeviz is imported here: the code
runs in placeviz with the module renamed. Families declare one program per case of a table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.harness import PROGRAMS, Note, Run, Runs, program

__all__ = ["PROGRAMS"]

Build = Callable[[Any], Any]


def family(prefix: str, table: dict[str, Build], **options: Any) -> None:
    for key, build in table.items():
        program(build, name=f"{prefix}_{key}", **options)


def _m(tf: Any, rows: list[list[float]]) -> Any:
    return tf.constant(np.array(rows, dtype=np.float32))


# -- values of ordinary ops ----------------------------------------------------------------------

family(
    "const",
    {
        "float_scalar": lambda tf: tf.constant(1.5),
        "int_list": lambda tf: tf.constant([1, 2, 3]),
        "float_matrix": lambda tf: tf.constant([[1.0, 2.0], [3.0, 4.0]]),
        "float64": lambda tf: tf.constant([1.0, 2.0], dtype=tf.float64),
        "int_to_float": lambda tf: tf.constant([1, 2], dtype=tf.float32),
        "int64": lambda tf: tf.constant(3, dtype=tf.int64),
        "bool": lambda tf: tf.constant([True, False]),
        "broadcast_shape": lambda tf: tf.constant(7.0, shape=[2, 3]),
        "reshape_list": lambda tf: tf.constant([1, 2, 3, 4, 5, 6], shape=[2, 3]),
        "named": lambda tf: tf.constant(1.0, name="c"),
        "numpy_float64": lambda tf: tf.constant(np.array([0.5, 1.5])),
        "numpy_int64": lambda tf: tf.constant(np.arange(4)),
        "numpy_float16": lambda tf: tf.constant(np.array([0.5], dtype=np.float16)),
        "empty": lambda tf: tf.constant([], dtype=tf.float32),
        "string": lambda tf: tf.constant("hi"),
        "python_float_is_float32": lambda tf: tf.constant(0.1),
        "python_int_is_int32": lambda tf: tf.constant(7),
        "convert_to_tensor": lambda tf: tf.convert_to_tensor([1.0, 2.0]),
        "nested_list": lambda tf: tf.constant([[[1], [2]], [[3], [4]]]),
    },
)


def _binary(op: Callable[[Any, Any, Any], Any], x: Any, y: Any) -> Build:
    return lambda tf: op(tf, tf.constant(x), tf.constant(y))


family(
    "math",
    {
        "add_floats": _binary(lambda tf, a, b: a + b, 1.0, 2.0),
        "add_ints": _binary(lambda tf, a, b: a + b, 1, 2),
        "add_fn": _binary(lambda tf, a, b: tf.add(a, b), [1.0, 2.0], [3.0, 4.0]),
        "add_broadcast": _binary(lambda tf, a, b: a + b, [[1.0, 2.0, 3.0]] * 2, [10.0, 20.0, 30.0]),
        "add_broadcast_column": _binary(lambda tf, a, b: a + b, [[1.0], [2.0]], [10.0, 20.0]),
        "sub_floats": _binary(lambda tf, a, b: a - b, 5.0, 2.0),
        "subtract_fn": _binary(lambda tf, a, b: tf.subtract(a, b), [5, 6], [1, 2]),
        "mul_floats": _binary(lambda tf, a, b: a * b, [1.0, 2.0], [3.0, 4.0]),
        "multiply_fn": _binary(lambda tf, a, b: tf.multiply(a, b), 3, 4),
        "truediv_floats": _binary(lambda tf, a, b: a / b, 1.0, 4.0),
        "truediv_ints_gives_float64": _binary(lambda tf, a, b: a / b, 7, 2),
        "divide_fn": _binary(lambda tf, a, b: tf.divide(a, b), [1.0, 3.0], [2.0, 2.0]),
        "floordiv_ints": _binary(lambda tf, a, b: a // b, [7, -7], [2, 2]),
        "floordiv_floats": _binary(lambda tf, a, b: a // b, [7.5, -7.5], [2.0, 2.0]),
        "mod_ints": _binary(lambda tf, a, b: a % b, [7, -7], [3, 3]),
        "pow_operator": _binary(lambda tf, a, b: a**b, [2.0, 3.0], [3.0, 2.0]),
        "pow_fn": _binary(lambda tf, a, b: tf.pow(a, b), [2, 3], [3, 2]),
        "maximum": _binary(lambda tf, a, b: tf.maximum(a, b), [1.0, 5.0], [3.0, 2.0]),
        "minimum": _binary(lambda tf, a, b: tf.minimum(a, b), [1, 5], [3, 2]),
        "greater": _binary(lambda tf, a, b: a > b, [1.0, 5.0], [3.0, 2.0]),
        "less_equal": _binary(lambda tf, a, b: a <= b, [1, 5, 3], [3, 2, 3]),
        "matmul_operator": _binary(lambda tf, a, b: a @ b, [[1.0, 2.0]], [[3.0], [4.0]]),
        "matmul_fn": _binary(
            lambda tf, a, b: tf.matmul(a, b), [[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]
        ),
        "matmul_transpose_a": _binary(
            lambda tf, a, b: tf.matmul(a, b, transpose_a=True), [[1.0, 2.0]], [[3.0, 4.0]]
        ),
        "matmul_transpose_b": _binary(
            lambda tf, a, b: tf.matmul(a, b, transpose_b=True), [[1.0, 2.0]], [[3.0, 4.0]]
        ),
        "matmul_ints": _binary(lambda tf, a, b: tf.matmul(a, b), [[1, 2]], [[3], [4]]),
        "add_python_scalar_right": lambda tf: tf.constant([1.0, 2.0]) + 2,
        "add_python_scalar_left": lambda tf: 2 + tf.constant([1.0, 2.0]),
        "sub_python_scalar_left": lambda tf: 10 - tf.constant([1.0, 2.0]),
        "mul_python_scalar_left": lambda tf: 3 * tf.constant([1, 2]),
        "div_python_scalar_left": lambda tf: 1 / tf.constant([2.0, 4.0]),
        "mul_numpy_array": lambda tf: tf.constant([1.0, 2.0]) * np.array([3.0, 4.0], np.float32),
        "negate_operator": lambda tf: -tf.constant([1.0, -2.0]),
        "abs_operator": lambda tf: abs(tf.constant([1.0, -2.0])),
        "negative_fn": lambda tf: tf.negative(tf.constant([1, -2])),
        "abs_fn": lambda tf: tf.abs(tf.constant([-3, 4])),
        "square": lambda tf: tf.square(tf.constant([3.0, -2.0])),
        "sqrt": lambda tf: tf.sqrt(tf.constant([4.0, 9.0])),
        "exp": lambda tf: tf.exp(tf.constant([0.0, 1.0])),
        "log": lambda tf: tf.log(tf.constant([1.0, 10.0])),
        "sigmoid": lambda tf: tf.sigmoid(tf.constant([0.0, 2.0])),
        "tanh": lambda tf: tf.tanh(tf.constant([0.0, 1.0])),
        "relu": lambda tf: tf.nn.relu(tf.constant([-1.0, 2.0])),
        "nn_sigmoid": lambda tf: tf.nn.sigmoid(tf.constant([0.0])),
        "nn_tanh": lambda tf: tf.nn.tanh(tf.constant([0.5])),
        "softmax_vector": lambda tf: tf.nn.softmax(tf.constant([1.0, 2.0, 3.0])),
        "softmax_matrix": lambda tf: tf.nn.softmax(tf.constant([[1.0, 1.0], [0.0, 2.0]])),
        "add_n": lambda tf: tf.add_n([tf.constant([1.0]), tf.constant([2.0]), tf.constant([3.0])]),
        "add_n_one": lambda tf: tf.add_n([tf.constant([1.0, 2.0])]),
        "div_fn_alias": _binary(lambda tf, a, b: tf.div(a, b), 7, 2),
        "truediv_fn": _binary(lambda tf, a, b: tf.truediv(a, b), 7, 2),
        "chained": lambda tf: (tf.constant(1.0) + 2.0) * 3.0 - 4.0,
        "identity": lambda tf: tf.identity(tf.constant([1, 2])),
        "identity_named": lambda tf: tf.identity(tf.constant(1.0), name="out"),
    },
)

_X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

family(
    "reduce",
    {
        "sum_all": lambda tf: tf.reduce_sum(tf.constant(_X)),
        "sum_axis0": lambda tf: tf.reduce_sum(tf.constant(_X), axis=0),
        "sum_axis1_keepdims": lambda tf: tf.reduce_sum(tf.constant(_X), axis=1, keepdims=True),
        "sum_negative_axis": lambda tf: tf.reduce_sum(tf.constant(_X), axis=-1),
        "sum_axis_list": lambda tf: tf.reduce_sum(tf.constant(_X), axis=[0, 1]),
        "sum_ints": lambda tf: tf.reduce_sum(tf.constant([[1, 2], [3, 4]]), axis=0),
        "mean_all": lambda tf: tf.reduce_mean(tf.constant(_X)),
        "mean_ints_truncates": lambda tf: tf.reduce_mean(tf.constant([1, 2])),
        "mean_axis1": lambda tf: tf.reduce_mean(tf.constant(_X), axis=1),
        "max_all": lambda tf: tf.reduce_max(tf.constant(_X)),
        "max_axis0": lambda tf: tf.reduce_max(tf.constant(_X), axis=0),
        "min_axis1": lambda tf: tf.reduce_min(tf.constant(_X), axis=1),
        "sum_named": lambda tf: tf.reduce_sum(tf.constant(_X), name="total"),
    },
)

family(
    "array",
    {
        "reshape": lambda tf: tf.reshape(tf.constant(_X), [3, 2]),
        "reshape_minus_one": lambda tf: tf.reshape(tf.constant(_X), [-1]),
        "reshape_to_scalar": lambda tf: tf.reshape(tf.constant([5.0]), []),
        "transpose_default": lambda tf: tf.transpose(tf.constant(_X)),
        "transpose_perm": lambda tf: tf.transpose(tf.constant(np.zeros((1, 2, 3))), perm=[2, 0, 1]),
        "concat_axis0": lambda tf: tf.concat([tf.constant(_X), tf.constant(_X)], axis=0),
        "concat_axis1": lambda tf: tf.concat([tf.constant(_X), tf.constant(_X)], 1),
        "concat_negative_axis": lambda tf: tf.concat([tf.constant([[1]]), tf.constant([[2]])], -1),
        "concat_one": lambda tf: tf.concat([tf.constant([1.0, 2.0])], 0),
        "split_num": lambda tf: tf.split(tf.constant([1.0, 2.0, 3.0, 4.0]), 2),
        "split_axis1": lambda tf: tf.split(tf.constant(_X), 3, axis=1),
        "split_sizes": lambda tf: tf.split(tf.constant([1, 2, 3, 4, 5]), [2, 3]),
        "stack": lambda tf: tf.stack([tf.constant([1, 2]), tf.constant([3, 4])]),
        "stack_axis1": lambda tf: tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1),
        "unstack": lambda tf: tf.unstack(tf.constant(_X)),
        "unstack_axis1": lambda tf: tf.unstack(tf.constant(_X), axis=1),
        "squeeze_all": lambda tf: tf.squeeze(tf.constant([[[1.0], [2.0]]])),
        "squeeze_axis": lambda tf: tf.squeeze(tf.constant([[[1.0], [2.0]]]), axis=[2]),
        "expand_dims_0": lambda tf: tf.expand_dims(tf.constant([1, 2]), 0),
        "expand_dims_last": lambda tf: tf.expand_dims(tf.constant([1, 2]), -1),
        "gather": lambda tf: tf.gather(tf.constant([10, 20, 30]), tf.constant([2, 0])),
        "gather_rows": lambda tf: tf.gather(tf.constant(_X), [1, 1, 0]),
        "gather_axis1": lambda tf: tf.gather(tf.constant(_X), [2], axis=1),
        "slice": lambda tf: tf.slice(tf.constant(_X), [0, 1], [2, 2]),
        "slice_minus_one": lambda tf: tf.slice(tf.constant(_X), [1, 0], [-1, -1]),
        "cast_float_to_int_truncates": lambda tf: tf.cast(tf.constant([1.7, -1.7]), tf.int32),
        "cast_int_to_float64": lambda tf: tf.cast(tf.constant([1, 2]), tf.float64),
        "cast_float_to_bool": lambda tf: tf.cast(tf.constant([0.0, 2.0]), tf.bool),
        "cast_same_dtype": lambda tf: tf.cast(tf.constant([1.0]), tf.float32),
        "fill": lambda tf: tf.fill([2, 2], 3.0),
        "fill_int": lambda tf: tf.fill([3], 9),
        "zeros": lambda tf: tf.zeros([2, 3]),
        "zeros_int": lambda tf: tf.zeros([2], dtype=tf.int32),
        "ones": lambda tf: tf.ones([3]),
        "ones_float64": lambda tf: tf.ones([1, 2], tf.float64),
        "zeros_like": lambda tf: tf.zeros_like(tf.constant(_X)),
        "ones_like_int": lambda tf: tf.ones_like(tf.constant([4, 5])),
        "zeros_scalar": lambda tf: tf.zeros([]),
        "getitem_index": lambda tf: tf.constant(_X)[1],
        "getitem_slice": lambda tf: tf.constant([1, 2, 3, 4])[1:3],
        "getitem_steps_and_ellipsis": lambda tf: tf.constant(_X)[..., ::-2],
        "getitem_new_axis": lambda tf: tf.constant(_X)[None, 1, -2:],
        "getitem_tensor_index": lambda tf: tf.constant(_X)[tf.constant(1)],
        "getitem_scalar": lambda tf: tf.constant(_X)[-1, 0],
        "concat_python_values": lambda tf: tf.concat([[1.0], tf.constant([2.0]), [3.0]], 0),
        "split_python_value": lambda tf: tf.split([[1.0, 2.0], [3.0, 4.0]], 2, axis=1),
        "split_sizes_python_value": lambda tf: tf.split([1.0, 2.0, 3.0], [1, -1]),
        "gather_python_params": lambda tf: tf.gather([1.0, 2.0, 3.0], tf.constant([2, 0])),
        "slice_tensor_bounds": lambda tf: tf.slice(
            tf.constant(_X), tf.constant([0, 1]), tf.constant([-1, 1])
        ),
        "tile": lambda tf: tf.tile(tf.constant(_X), [2, 1]),
        "tile_scalar": lambda tf: tf.tile(tf.constant(3.0), []),
        "tile_tensor_multiples": lambda tf: tf.tile(tf.constant([1, 2]), tf.constant([3])),
        "transpose_scalar": lambda tf: tf.transpose(tf.constant(3.0), []),
        "reduce_sum_no_axes": lambda tf: tf.reduce_sum(tf.constant(_X), []),
    },
)

# -- feeds and fetches ---------------------------------------------------------------------------


def _fed_placeholder(shape: Any, value: Any, dtype: str = "float32") -> Build:
    def build(tf: Any) -> Any:
        x = tf.placeholder(getattr(tf, dtype), shape=shape, name="x")
        return Run(x * 2, {x: value})

    return build


family(
    "feed",
    {
        "scalar": _fed_placeholder([], 3.0),
        "vector": _fed_placeholder([2], [1.0, 2.0]),
        "unknown_batch": _fed_placeholder([None, 2], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        "no_shape": _fed_placeholder(None, [[1.0]]),
        "int_list_to_float": _fed_placeholder([2], [1, 2]),
        "int32": _fed_placeholder([2], [1, 2], "int32"),
        "numpy_float64_to_float32": _fed_placeholder([2], np.array([0.5, 1.5])),
    },
)


@program
def feed_a_constant(tf: Any) -> Any:
    """Any tensor can be fed, not only placeholders; the feed replaces its value."""
    c = tf.constant(1.0, name="c")
    return Run(c + 1.0, {c: 10.0})


@program
def feed_by_name(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [2], name="x")
    return Run(x + 1.0, {"x:0": [1.0, 2.0]})


@program
def feed_intermediate_tensor(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [], name="x")
    y = x * 2.0
    return Run(y + 1.0, {y: 5.0})


@program
def feed_two_placeholders(tf: Any) -> Any:
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    return Run(a - b, {a: 5.0, b: 3.0})


@program
def fetch_dict(tf: Any) -> Any:
    return {"a": tf.constant(1), "b": tf.constant([2.0])}


@program
def fetch_nested(tf: Any) -> Any:
    a = tf.constant(1.0)
    return [a, (a + 1.0, [a * 3.0])]


@program
def fetch_tuple(tf: Any) -> Any:
    return (tf.constant(1), tf.constant(2))


@program
def fetch_by_tensor_name(tf: Any) -> Any:
    tf.add(tf.constant(1.0), tf.constant(2.0), name="sum")
    return "sum:0"


@program
def fetch_operation_by_name(tf: Any) -> Any:
    tf.add(tf.constant(1.0), tf.constant(2.0), name="sum")
    return ["sum", "sum:0"]


@program
def fetch_operation_gives_none(tf: Any) -> Any:
    return tf.no_op(name="nothing")


@program
def fetch_same_tensor_twice(tf: Any) -> Any:
    a = tf.constant([1, 2])
    return [a, a]


@program
def fetch_placeholder_with_feed(tf: Any) -> Any:
    x = tf.placeholder(tf.int32, [], name="x")
    return Run(x, {x: 4})


@program
def fetch_group(tf: Any) -> Any:
    return tf.group(tf.constant(1.0), tf.constant(2.0))


@program
def fetch_empty_list(tf: Any) -> Any:
    tf.constant(1.0)
    return Run([])


@program
def runs_twice_same_values(tf: Any) -> Any:
    c = tf.constant(2.0) * 3.0
    return Runs(c, c)


@program
def runs_grow_graph_between(tf: Any) -> Any:
    """Ops added after the first run are placed on the next one."""
    a = tf.constant(1.0, name="a")
    return Runs(a, Run(a))


# -- errors --------------------------------------------------------------------------------------


@program(error=["You must feed a value for placeholder tensor", "x"])
def error_missing_feed(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [2], name="x")
    return x + 1.0


@program(error=["Cannot feed value of shape (3,)", "(2,)"])
def error_feed_wrong_shape(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [2], name="x")
    return Run(x + 1.0, {x: [1.0, 2.0, 3.0]})


@program(error=["could not convert string to float"])
def error_feed_string_to_float(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [], name="x")
    return Run(x + 1.0, {x: "abc"})


def _duplicate_axes(shape: Any) -> Build:
    """Axes naming one dimension twice: TF's shape function takes them, its kernel does not."""

    def build(tf: Any) -> Any:
        x = tf.placeholder(tf.float32, shape, name="x")
        return Run(tf.reduce_sum(x, axis=[1, -1]), {x: np.ones((2, 3), np.float32)})

    return build


family(
    "error_reduce_duplicate_axes",
    {
        "static_rank": _duplicate_axes([2, 3]),
        "unknown_rank": _duplicate_axes(None),
    },
    error=["Invalid reduction arguments: Axes contains duplicate dimension: 1"],
)


@program(error=["uninitialized", "v"])
def error_uninitialized_variable(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return v + 1.0


@program(error=["uninitialized", "v"])
def error_uninitialized_variable_fetched(tf: Any) -> Any:
    return tf.Variable([1.0, 2.0], name="v")


@program(error=["uninitialized"])
def error_uninitialized_get_variable(tf: Any) -> Any:
    return tf.get_variable("w", shape=[2], initializer=tf.zeros_initializer()) * 2.0


@program(error=["Dimensions must be equal"])
def error_matmul_shapes(tf: Any) -> Any:
    return tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0]]))


@program(error=["Dimensions must be equal"])
def error_add_shapes(tf: Any) -> Any:
    return tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])


@program(error=["Cannot reshape a tensor with 6 elements to shape [4]"])
def error_reshape_size(tf: Any) -> Any:
    return tf.reshape(tf.constant(_X), [4])


@program(error=["Input to reshape is a tensor with 3 values"])
def error_reshape_at_run_time(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None], name="x")
    return Run(tf.reshape(x, [2]), {x: [1.0, 2.0, 3.0]})


@program(error=["Shape must be rank 2 but is rank 1"])
def error_matmul_rank(tf: Any) -> Any:
    return tf.matmul(tf.constant([1.0, 2.0]), tf.constant([[1.0], [2.0]]))


@program(error=["int32", "float32"])
def error_add_dtypes(tf: Any) -> Any:
    return tf.constant(1.0) + tf.constant(1)


@program(error=["int32", "float32"])
def error_matmul_dtypes(tf: Any) -> Any:
    return tf.matmul(tf.constant([[1.0]]), tf.constant([[1]]))


@program(error=["None", "invalid type"])
def error_fetch_none(tf: Any) -> Any:
    tf.constant(1.0)
    return Run(None)


@program(error=["is not an element of this graph"])
def error_fetch_from_other_graph(tf: Any) -> Any:
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    tf.constant(2.0)
    return other


@program(error=["The name 'nope:0' refers to a Tensor which does not exist"])
def error_fetch_unknown_name(tf: Any) -> Any:
    tf.constant(1.0)
    return "nope:0"


@program(error=["Graph is finalized"])
def error_graph_finalized(tf: Any) -> Any:
    tf.constant(1.0)
    tf.get_default_graph().finalize()
    return tf.constant(2.0)


@program(error=["indices[0] = 5 is not in [0, 3)"])
def error_gather_out_of_range(tf: Any) -> Any:
    return tf.gather(tf.constant([1.0, 2.0, 3.0]), tf.constant([5]))


@program(error=["Shapes must be equal rank, but are 0 and 1"])
def error_assign_shape(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return tf.assign(v, [1.0, 2.0])


@program(error=["Dimension 0 in both shapes must be equal"])
def error_concat_shapes(tf: Any) -> Any:
    return tf.concat([tf.constant([[1.0, 2.0]]), tf.constant([[1.0], [2.0]])], 0)


@program(error=["Can't concatenate scalars"])
def error_concat_scalars(tf: Any) -> Any:
    return tf.concat([tf.constant(1.0), tf.constant(2.0)], 0)


@program(error=["Dimension size must be evenly divisible by 3 but is 4"])
def error_split_uneven(tf: Any) -> Any:
    return tf.split(tf.constant([1.0, 2.0, 3.0, 4.0]), 3)


@program(error=["Can not squeeze dim[1], expected a dimension of 1, got 2"])
def error_squeeze_non_unit(tf: Any) -> Any:
    return tf.squeeze(tf.constant([[1.0, 2.0]]), axis=[1])


@program(error=["Cannot feed value of shape", "()"])
def error_feed_vector_to_scalar(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [], name="x")
    return Run(x * 1.0, {x: [1.0]})


@program(error=["Cannot interpret feed_dict key as Tensor"])
def error_feed_unknown_name(tf: Any) -> Any:
    tf.constant(1.0)
    return Run(tf.constant(2.0), {"nope:0": 1.0})


@program(error=["Iterating over a symbolic `tf.Tensor` is not allowed"])
def error_iterate_tensor(tf: Any) -> Any:
    return list(tf.constant([1.0, 2.0]))


@program(error=["Using a symbolic `tf.Tensor` as a Python `bool` is not allowed"])
def error_tensor_as_bool(tf: Any) -> Any:
    if tf.constant(True):
        return tf.constant(1.0)
    return None


@program(error=["parameter 'begin'", "float32"])
def error_slice_empty_list(tf: Any) -> Any:
    return tf.slice(tf.constant(3.0), [], [])


@program(error=["Invalid reduction dimension"])
def error_reduce_axis(tf: Any) -> Any:
    return tf.reduce_sum(tf.constant([1.0, 2.0]), axis=3)


@program(error=["Expected int32, but got 1.5"])
def error_constant_float_to_int(tf: Any) -> Any:
    return tf.constant(1.5, dtype=tf.int32)


# -- placement on one CPU: pins, soft placement ---------------------------------------------------


def _pinned(spec: Any) -> Build:
    def build(tf: Any) -> Any:
        with tf.device(spec):
            c = tf.constant([1.0, 2.0], name="c")
            d = tf.identity(c, name="d")
        return d

    return build


_LOCAL_PINS = {
    "cpu0_lower": "/cpu:0",
    "cpu0_upper": "/CPU:0",
    "device_cpu0": "/device:CPU:0",
    "no_slash": "cpu:0",
    "device_no_slash": "device:CPU:0",
    "cpu_any": "/cpu:*",
    "device_cpu_no_id": "/device:CPU",
    "job_localhost": "/job:localhost",
    "replica0": "/replica:0",
    "task0": "/task:0",
    "job_task": "/job:localhost/task:0",
    "full": "/job:localhost/replica:0/task:0/device:CPU:0",
    "full_legacy": "/job:localhost/replica:0/task:0/cpu:0",
    "empty": "",
    "none": None,
}
_MISSING_PINS = {
    "gpu0": "/gpu:0",
    "device_gpu0": "/device:GPU:0",
    "gpu_any": "/device:GPU:*",
    "cpu1": "/cpu:1",
    "job_worker": "/job:worker",
    "task1": "/task:1",
    "replica1": "/replica:1",
    "job_localhost_task1": "/job:localhost/task:1",
    "job_ps_cpu": "/job:ps/task:0/cpu:0",
    "tpu0": "/device:TPU:0",
}
family("pin", {key: _pinned(spec) for key, spec in _LOCAL_PINS.items()})
family(
    "pin_missing",
    {key: _pinned(spec) for key, spec in _MISSING_PINS.items()},
    error=["Cannot assign a device for operation"],
)
# Soft placement relaxes the device type and index, never the job, replica or task.
family("pin_missing_soft", {key: _pinned(spec) for key, spec in _MISSING_PINS.items()}, soft=True)
family("pin_soft", {key: _pinned(spec) for key, spec in list(_LOCAL_PINS.items())[:4]}, soft=True)


@program(error=["Cannot assign a device for operation", "GPU:0"])
def error_pin_gpu_message(tf: Any) -> Any:
    with tf.device("/device:GPU:0"):
        c = tf.constant(1.0, name="c")
    return c


@program(error=["Cannot assign a device for operation"])
def error_unused_op_on_missing_device_fails_the_run(tf: Any) -> Any:
    """TensorFlow places the whole graph at the first run, so an op the run does not need still
    fails it."""
    with tf.device("/gpu:0"):
        tf.constant(1.0, name="unused")
    return tf.constant(2.0, name="wanted")


# -- placement on four CPUs ----------------------------------------------------------------------

family(
    "cpus4_pin",
    {
        "cpu0": _pinned("/cpu:0"),
        "cpu1": _pinned("/cpu:1"),
        "cpu3": _pinned("/cpu:3"),
        "device_cpu2": _pinned("/device:CPU:2"),
        "cpu_any": _pinned("/cpu:*"),
        "job_localhost": _pinned("/job:localhost"),
        "full_cpu2": _pinned("/job:localhost/replica:0/task:0/device:CPU:2"),
    },
    cpus=4,
)
family(
    "cpus4_pin_missing",
    {"cpu4": _pinned("/cpu:4"), "gpu0": _pinned("/gpu:0")},
    cpus=4,
    error=["Cannot assign a device for operation"],
)
family(
    "cpus4_pin_missing_soft",
    {"cpu4": _pinned("/cpu:4"), "gpu1": _pinned("/gpu:1")},
    cpus=4,
    soft=True,
)


@program(cpus=4)
def cpus4_unpinned_ops_go_to_cpu0(tf: Any) -> Any:
    a = tf.constant([1.0, 2.0], name="a")
    return tf.reduce_sum(a * a, name="s")


@program(cpus=4)
def cpus4_nested_device_scopes(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
        with tf.device("/cpu:2"):
            b = tf.constant(2.0, name="b")
            with tf.device(None):
                c = tf.constant(3.0, name="c")
        d = tf.add_n([a, b, c], name="d")
    return d


@program(cpus=4)
def cpus4_nested_partial_scopes_merge(tf: Any) -> Any:
    with tf.device("/job:localhost"):
        with tf.device("/cpu:3"):
            a = tf.constant(1.0, name="a")
        with tf.device("/task:0"):
            b = tf.constant(2.0, name="b")
    return a + b


@program(cpus=4)
def cpus4_inputs_on_other_devices(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant([1.0, 2.0], name="a")
    with tf.device("/cpu:2"):
        b = tf.constant([3.0, 4.0], name="b")
    with tf.device("/cpu:3"):
        c = tf.multiply(a, b, name="c")
    return c


@program(cpus=4)
def cpus4_generator_follows_its_consumer(tf: Any) -> Any:
    """A source op with one consumer goes where that consumer is pinned (placer heuristic)."""
    a = tf.constant(1.0, name="a")
    with tf.device("/cpu:2"):
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def cpus4_generator_with_two_consumers_stays(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    with tf.device("/cpu:2"):
        b = tf.identity(a, name="b")
    with tf.device("/cpu:3"):
        c = tf.identity(a, name="c")
    return [b, c]


@program(cpus=4)
def cpus4_placeholder_follows_its_consumer(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        y = tf.identity(x, name="y")
    return Run(y, {x: 2.0})


@program(cpus=4)
def cpus4_group_on_several_devices(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:2"):
        b = tf.constant(2.0, name="b")
    return tf.group(a, b, name="both")


@program(cpus=4)
def cpus4_group_under_device_scope(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:3"):
        g = tf.group(a, name="g")
    return g


@program(cpus=4)
def cpus4_no_op_with_control_inputs(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        n = tf.no_op(name="n")
    return n


@program(cpus=4)
def cpus4_device_function(tf: Any) -> Any:
    def by_type(op: Any) -> str:
        return "/cpu:1" if op.type == "Const" else "/cpu:2"

    with tf.device(by_type):
        a = tf.constant(1.0, name="a")
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def cpus4_device_function_sees_node_def_device(tf: Any) -> Any:
    def keep_or_cpu3(op: Any) -> str:
        return op.device or "/cpu:3"

    with tf.device(keep_or_cpu3):
        a = tf.constant(1.0, name="a")
        with tf.device("/cpu:1"):
            b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def cpus4_device_function_returning_none(tf: Any) -> Any:
    with tf.device("/cpu:2"), tf.device(lambda op: None):
        a = tf.constant(1.0, name="a")
    return a


@program(cpus=4)
def cpus4_device_spec_object(tf: Any) -> Any:
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=2)):
        a = tf.constant(1.0, name="a")
    return a


@program(cpus=4)
def cpus4_set_device_after_creation(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    a.op._set_device("/cpu:3")
    return a


@program(cpus=4)
def cpus4_placement_sticks_across_runs(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    first = Run(a)
    return Runs(first, Run(a))


# -- colocation ----------------------------------------------------------------------------------


@program(cpus=4)
def colocate_with_pinned_op(tf: Any) -> Any:
    with tf.device("/cpu:2"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def colocate_with_tensor(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a.op):
        b = tf.constant(2.0, name="b")
    return a + b


@program(cpus=4)
def colocate_with_unpinned_op(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    with tf.device("/cpu:3"):
        b = tf.constant(2.0, name="b")
    with tf.colocate_with(a):
        c = tf.add(a, b, name="c")
    return c


@program(cpus=4)
def colocate_with_then_device_scope(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a), tf.device("/cpu:2"):
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def colocate_inside_device_scope(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:2"), tf.colocate_with(a):
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def colocate_nested(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:3"):
        b = tf.constant(2.0, name="b")
    with tf.colocate_with(a), tf.colocate_with(b):
        c = tf.add(a, b, name="c")
    return c


@program(cpus=4)
def colocate_ignore_existing(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:3"):
        b = tf.constant(2.0, name="b")
    with tf.colocate_with(a), tf.colocate_with(b, ignore_existing=True):
        c = tf.add(a, b, name="c")
    return c


@program(cpus=4)
def colocate_with_none_clears(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a), tf.colocate_with(None, ignore_existing=True):
        b = tf.constant(2.0, name="b")
    return b


@program(cpus=4)
def colocate_with_variable(tf: Any) -> Any:
    with tf.device("/cpu:2"):
        v = tf.Variable(1.0, name="v")
    with tf.colocate_with(v):
        c = tf.constant(3.0, name="c")
    return Runs(v.initializer, c)


@program(cpus=4, error=["Cannot colocate nodes"])
def colocate_conflicting_pins(tf: Any) -> Any:
    """An op whose device request differs from its colocation group's."""
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.constant(2.0, name="b")
    b.op._set_device("/cpu:2")
    return b


@program(cpus=4, soft=True)
def colocate_conflicting_pins_soft(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.constant(2.0, name="b")
    b.op._set_device("/cpu:2")
    return b


@program(error=["Cannot assign a device for operation"])
def colocate_with_missing_device(tf: Any) -> Any:
    with tf.device("/gpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.identity(a, name="b")
    return b


@program(soft=True)
def colocate_with_missing_device_soft(tf: Any) -> Any:
    with tf.device("/gpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.identity(a, name="b")
    return b


# -- variables -----------------------------------------------------------------------------------


@program
def variable_initialize_and_read(tf: Any) -> Any:
    v = tf.Variable([1.0, 2.0], name="v")
    return Runs(tf.global_variables_initializer(), v)


@program
def variable_int(tf: Any) -> Any:
    v = tf.Variable(3, name="v")
    return Runs(v.initializer, v + 1)


@program
def variable_from_tensor(tf: Any) -> Any:
    v = tf.Variable(tf.zeros([2, 2]), name="v")
    return Runs(v.initializer, v)


@program
def variable_default_name(tf: Any) -> Any:
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)
    return Runs(tf.global_variables_initializer(), [a, b])


@program
def variable_assign_then_read_in_next_run(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, tf.assign(v, 5.0), v)


@program
def variable_assign_returns_new_value(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, tf.assign(v, 5.0))


@program
def variable_assign_method(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, v.assign(7.0), v.read_value())


@program
def variable_assign_add_twice(tf: Any) -> Any:
    v = tf.Variable(1, name="v")
    inc = tf.assign_add(v, 2)
    return Runs(v.initializer, inc, inc, v)


@program
def variable_assign_add_method(tf: Any) -> Any:
    v = tf.Variable([1.0, 1.0], name="v")
    return Runs(v.initializer, v.assign_add([1.0, 2.0]))


@program
def variable_read_after_assign_with_control_dependency(tf: Any) -> Any:
    """A read ordered after an assign sees the assigned value (reference semantics)."""
    v = tf.Variable(1.0, name="v")
    a = tf.assign(v, 10.0)
    with tf.control_dependencies([a]):
        r = tf.identity(v, name="r")
    return Runs(v.initializer, r)


@program
def variable_read_value_after_assign(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    a = tf.assign(v, 10.0)
    with tf.control_dependencies([a]):
        r = v.read_value()
    return Runs(v.initializer, r)


@program
def variable_add_after_assign_with_control_dependency(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    a = tf.assign(v, 10.0)
    with tf.control_dependencies([a]):
        r = v + 1.0
    return Runs(v.initializer, r)


@program
def variable_control_dependency_on_variable(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    with tf.control_dependencies([v]):
        c = tf.constant(2.0, name="c")
    return Runs(v.initializer, c)


@program
def variable_initialized_value(tf: Any) -> Any:
    v = tf.Variable(2.0, name="v")
    w = tf.Variable(v.initialized_value() * 3.0, name="w")
    return Runs(tf.global_variables_initializer(), w)


@program
def variable_initial_value_attribute(tf: Any) -> Any:
    v = tf.Variable([1.0, 2.0], name="v")
    return Note(name=v.initial_value.name, op=v.op.name, value=v.value().name, dtype=v.dtype.name)


@program
def variable_names(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return Note(
        name=v.name,
        initializer=v.initializer.name,
        op=v.op.name,
        shape=v.shape.as_list(),
        base=v.dtype.base_dtype.name,
        device=v.device,
    )


@program
def variable_collections(tf: Any) -> Any:
    tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b", trainable=False)
    return Note(
        all=[v.name for v in tf.global_variables()],
        trainable=[v.name for v in tf.trainable_variables()],
    )


@program
def variables_initializer_subset(tf: Any) -> Any:
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b")
    return Runs(tf.variables_initializer([a]), a)


@program(error=["uninitialized", "b"])
def error_variables_initializer_subset_leaves_others(tf: Any) -> Any:
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    return Runs(tf.variables_initializer([a]), a + b)


@program
def variable_fetch_directly(tf: Any) -> Any:
    """Fetching a variable fetches its value without building a read op."""
    v = tf.Variable([3.0], name="v")
    return Runs(v.initializer, v)


@program(cpus=4)
def variable_pinned_with_its_ops(tf: Any) -> Any:
    with tf.device("/cpu:2"):
        v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, v + 1.0)


@program(cpus=4)
def variable_assign_requested_elsewhere_follows_variable(tf: Any) -> Any:
    """A reference edge wins over the assign's own request."""
    with tf.device("/cpu:2"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/cpu:3"):
        a = tf.assign(v, 4.0, name="a")
    return Runs(v.initializer, a)


@program(cpus=4)
def variable_read_requested_elsewhere(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/cpu:3"):
        r = tf.identity(v, name="r")
    return Runs(v.initializer, r)


@program(cpus=4)
def variable_initial_value_pinned_elsewhere(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        init = tf.constant([1.0, 2.0], name="init")
    with tf.device("/cpu:2"):
        v = tf.Variable(init, name="v")
    return Runs(v.initializer, v)


@program(cpus=4)
def variable_device_function(tf: Any) -> Any:
    def variables_on_cpu1(op: Any) -> str:
        return "/cpu:1" if op.type in ("Variable", "VariableV2") else "/cpu:2"

    with tf.device(variables_on_cpu1):
        v = tf.Variable(1.0, name="v")
        y = v * 2.0
    return Runs(v.initializer, y)


@program(cpus=4)
def variable_under_colocate_with(tf: Any) -> Any:
    with tf.device("/cpu:3"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, v)


@program(cpus=4, soft=True)
def variable_int_pinned_soft(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        v = tf.Variable(3, name="v")
    return Runs(v.initializer, v)


@program(error=["Cannot assign a device for operation"])
def error_variable_on_missing_gpu(tf: Any) -> Any:
    with tf.device("/gpu:0"):
        v = tf.Variable(1.0, name="v")
    return v.initializer


@program(soft=True)
def variable_on_missing_gpu_soft(tf: Any) -> Any:
    with tf.device("/gpu:0"):
        v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, v)


@program
def variable_trainable_false(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v", trainable=False)
    return Runs(v.initializer, v)


@program
def variable_float64(tf: Any) -> Any:
    v = tf.Variable(np.array([1.5, 2.5]), name="v")
    return Runs(v.initializer, v * 2.0)


# -- variable_scope and get_variable -------------------------------------------------------------


@program
def get_variable_zeros(tf: Any) -> Any:
    w = tf.get_variable("w", shape=[2, 2], initializer=tf.zeros_initializer())
    return Runs(tf.global_variables_initializer(), w)


@program
def get_variable_ones(tf: Any) -> Any:
    w = tf.get_variable("w", shape=[3], initializer=tf.ones_initializer())
    return Runs(tf.global_variables_initializer(), w)


@program
def get_variable_constant_initializer(tf: Any) -> Any:
    w = tf.get_variable("w", shape=[2], initializer=tf.constant_initializer(0.5))
    return Runs(tf.global_variables_initializer(), w)


@program
def get_variable_from_value(tf: Any) -> Any:
    w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]))
    return Runs(tf.global_variables_initializer(), w)


@program(skip=["values"])
def get_variable_default_initializer(tf: Any) -> Any:
    w = tf.get_variable("w", shape=[2, 3])
    return Runs(tf.global_variables_initializer(), w)


@program(skip=["values"])
def get_variable_random_normal_initializer(tf: Any) -> Any:
    w = tf.get_variable("w", shape=[2], initializer=tf.random_normal_initializer())
    return Runs(tf.global_variables_initializer(), w)


@program
def variable_scope_names(tf: Any) -> Any:
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", shape=[1], initializer=tf.zeros_initializer())
        c = tf.constant(1.0, name="c")
    return Note(w=w.name, c=c.name)


@program
def variable_scope_nested(tf: Any) -> Any:
    with tf.variable_scope("a"), tf.variable_scope("b"):
        w = tf.get_variable("w", shape=[1])
    return Note(w=w.name, op=w.op.name)


@program
def variable_scope_reuse_true(tf: Any) -> Any:
    with tf.variable_scope("s"):
        w1 = tf.get_variable("w", shape=[1])
    with tf.variable_scope("s", reuse=True):
        w2 = tf.get_variable("w", shape=[1])
    return Note(same=w1 is w2, names=[w1.name, w2.name], count=len(tf.global_variables()))


@program
def variable_scope_reuse_variables(tf: Any) -> Any:
    with tf.variable_scope("s") as scope:
        w1 = tf.get_variable("w", shape=[1])
        scope.reuse_variables()
        w2 = tf.get_variable("w", shape=[1])
    return Note(same=w1 is w2)


@program
def variable_scope_auto_reuse(tf: Any) -> Any:
    names = []
    for _ in range(2):
        with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
            names.append(tf.get_variable("w", shape=[1]).name)
    return Note(names=names, count=len(tf.global_variables()))


@program
def variable_scope_reenter_op_names(tf: Any) -> Any:
    """Re-entering a variable scope opens a new name scope for ops, not for variables."""
    ops = []
    for _ in range(2):
        with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", shape=[1])
            ops.append(tf.identity(w, name="y").name)
    return Note(ops=ops)


@program
def variable_scope_default_name(tf: Any) -> Any:
    names = []
    for _ in range(2):
        with tf.variable_scope(None, default_name="block"):
            names.append(tf.get_variable("w", shape=[1]).name)
    return Note(names=names)


@program
def variable_scope_name_property(tf: Any) -> Any:
    with tf.variable_scope("outer") as outer, tf.variable_scope("inner") as inner:
        current = tf.get_variable_scope().name
    return Note(outer=outer.name, inner=inner.name, current=current)


@program
def variable_scope_object_reentry(tf: Any) -> Any:
    with tf.variable_scope("s") as scope:
        pass
    with tf.variable_scope(scope):
        w = tf.get_variable("w", shape=[1])
        c = tf.constant(1.0, name="c")
    return Note(w=w.name, c=c.name)


@program
def name_scope_does_not_prefix_get_variable(tf: Any) -> Any:
    with tf.name_scope("ns"):
        w = tf.get_variable("w", shape=[1])
        v = tf.Variable(1.0, name="v")
    return Note(w=w.name, v=v.name)


@program(error=["Variable w already exists, disallowed"])
def error_get_variable_twice(tf: Any) -> Any:
    tf.get_variable("w", shape=[1])
    tf.get_variable("w", shape=[1])


@program(error=["Variable s/w does not exist, or was not created with"])
def error_get_variable_reuse_missing(tf: Any) -> Any:
    with tf.variable_scope("s", reuse=True):
        tf.get_variable("w", shape=[1])


@program(error=["Trying to share variable s/w, but specified shape (2,) and found shape (1,)"])
def error_get_variable_reuse_other_shape(tf: Any) -> Any:
    with tf.variable_scope("s"):
        tf.get_variable("w", shape=[1])
    with tf.variable_scope("s", reuse=True):
        tf.get_variable("w", shape=[2])


@program(error=["Variable w did not get an initializer, so its `shape` argument must be specified"])
def error_get_variable_without_shape(tf: Any) -> Any:
    tf.get_variable("w")


@program(cpus=4)
def get_variable_under_device_scope(tf: Any) -> Any:
    with tf.device("/cpu:3"), tf.variable_scope("s"):
        w = tf.get_variable("w", shape=[2], initializer=tf.ones_initializer())
    return Runs(tf.global_variables_initializer(), w * 2.0)


@program
def get_variable_int(tf: Any) -> Any:
    w = tf.get_variable("w", shape=[2], dtype=tf.int32, initializer=tf.zeros_initializer())
    return Runs(tf.global_variables_initializer(), w)


# -- replica_device_setter (requested devices; no cluster to run on) -----------------------------


@program
def device_setter_ps_tasks_round_robin(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(1.0, name="v1")
        v2 = tf.Variable(2.0, name="v2")
        v3 = tf.Variable(3.0, name="v3")
        s = v1 + v2 + v3
    return Note(devices=[v1.device, v2.device, v3.device, s.device])


@program
def device_setter_nested_device(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(1.0, name="v1")
        with tf.device("/gpu:1"):
            a = tf.identity(v1, name="a")
            with tf.device("/task:1"):
                b = tf.identity(a, name="b")
    return Note(a=a.device, b=b.device)


@program
def device_setter_worker_device(tf: Any) -> Any:
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:3")
    with tf.device(setter):
        v = tf.Variable(1.0, name="v")
        y = v * 2.0
    return Note(v=v.device, y=y.device)


@program
def device_setter_ps_device(tf: Any) -> Any:
    setter = tf.train.replica_device_setter(ps_tasks=2, ps_device="/job:param/cpu:0")
    with tf.device(setter):
        v1 = tf.Variable(1.0, name="v1")
        v2 = tf.Variable(2.0, name="v2")
    return Note(v1=v1.device, v2=v2.device)


@program
def device_setter_cluster_spec(tf: Any) -> Any:
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1", "x:1"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        vs = [tf.Variable(float(i), name=f"v{i}") for i in range(4)]
        y = tf.add_n(vs)
    return Note(devices=[v.device for v in vs], y=y.device)


@program
def device_setter_no_ps_tasks_is_none(tf: Any) -> Any:
    return Note(setter=tf.train.replica_device_setter(ps_tasks=0) is None)


@program
def device_setter_variable_ops(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v = tf.Variable(1.0, name="v")
        a = tf.assign(v, 2.0)
    return Note(v=v.device, read=v.value().device, assign=a.device, init=v.initializer.device)


@program
def device_setter_get_variable(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        ws = [tf.get_variable(f"w{i}", shape=[1]) for i in range(4)]
    return Note(devices=[w.device for w in ws])


@program
def device_setter_merge_with_explicit_ps(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(1.0, name="v")
        w = tf.Variable(1.0, name="w")
    return Note(v=v.device, w=w.device)


@program
def cluster_spec_as_dict(tf: Any) -> Any:
    cluster = tf.train.ClusterSpec({"ps": ["a:1"], "worker": ["w:1", "x:1"]})
    return Note(
        jobs=sorted(cluster.jobs),
        tasks=cluster.num_tasks("worker"),
        d={k: list(v) for k, v in cluster.as_dict().items()},
    )


@program
def cluster_spec_as_cluster_def(tf: Any) -> Any:
    cluster = tf.train.ClusterSpec({"ps": ["a:1"], "worker": ["w:1", "x:1"]})
    jobs = cluster.as_cluster_def().job
    return Note(jobs=[(j.name, dict(j.tasks)) for j in jobs])


# -- names ---------------------------------------------------------------------------------------


def _names(build: Callable[[Any], list[Any]]) -> Build:
    """A program whose facts are the names of what it made."""
    return lambda tf: Note(names=[getattr(x, "name", x) for x in build(tf)])


family(
    "names",
    {
        "default_uniquified": _names(lambda tf: [tf.constant(1.0), tf.constant(2.0)]),
        "given_uniquified": _names(
            lambda tf: [tf.constant(1.0, name="c"), tf.constant(2.0, name="c")]
        ),
        "given_collides_with_suffix": _names(
            lambda tf: [
                tf.constant(1.0, name="c_1"),
                tf.constant(1.0, name="c"),
                tf.constant(1.0, name="c"),
            ]
        ),
        "name_scope": _names(lambda tf: _in_scopes(tf, ["a"])),
        "name_scope_nested": _names(lambda tf: _in_scopes(tf, ["a", "b"])),
        "name_scope_reopened": _names(
            lambda tf: _in_scopes(tf, ["a"]) + _in_scopes(tf, ["a"]) + _in_scopes(tf, ["a"])
        ),
        "name_scope_absolute": _names(lambda tf: _in_scopes(tf, ["a"]) + _in_scopes(tf, ["a/"])),
        "name_scope_empty_resets": _names(lambda tf: _in_scopes(tf, ["a", ""])),
        "name_scope_none_resets": _names(lambda tf: _in_scopes(tf, ["a", None])),
        "name_scope_slash_is_root": _names(lambda tf: _in_scopes(tf, ["a", "/"])),
        "name_scope_value": _names(lambda tf: _scope_strings(tf, ["a", "b"])),
        "name_scope_value_reopened": _names(
            lambda tf: _scope_strings(tf, ["a"]) * 1 + _scope_strings(tf, ["a"])
        ),
        "name_scope_get_name_scope": _names(lambda tf: _get_name_scope(tf, ["x", "y"])),
        "scope_name_used_as_op_name": _names(
            lambda tf: [*_in_scopes(tf, ["s"]), tf.constant(1.0, name="s")]
        ),
        "op_name_used_as_scope_name": _names(
            lambda tf: [tf.constant(1.0, name="s"), *_in_scopes(tf, ["s"])]
        ),
        "name_with_scope_prefix": _names(lambda tf: _in_scopes(tf, ["a"], name="a/b")),
        "unique_name": _names(
            lambda tf: [
                tf.get_default_graph().unique_name("foo"),
                tf.get_default_graph().unique_name("foo"),
                tf.get_default_graph().unique_name("foo", mark_as_used=False),
                tf.get_default_graph().unique_name("foo"),
            ]
        ),
        "tensor_names": _names(lambda tf: tf.split(tf.constant([1.0, 2.0]), 2)),
        "add_with_python_scalar": _names(
            lambda tf: _graph_names(tf, lambda: tf.constant(1.0) + 1.0)
        ),
        "mul_scalar_left": _names(lambda tf: _graph_names(tf, lambda: 2.0 * tf.constant(1.0))),
        "matmul_operator": _names(
            lambda tf: _graph_names(tf, lambda: tf.constant([[1.0]]) @ tf.constant([[1.0]]))
        ),
        "matmul_fn": _names(
            lambda tf: _graph_names(tf, lambda: tf.matmul(tf.constant([[1.0]]), [[2.0]]))
        ),
        "transpose": _names(
            lambda tf: _graph_names(tf, lambda: tf.transpose(tf.constant([[1.0]])))
        ),
        "concat": _names(
            lambda tf: _graph_names(tf, lambda: tf.concat([tf.constant([1]), tf.constant([2])], 0))
        ),
        "expand_dims": _names(
            lambda tf: _graph_names(tf, lambda: tf.expand_dims(tf.constant(1), 0))
        ),
        "reshape": _names(
            lambda tf: _graph_names(tf, lambda: tf.reshape(tf.constant([1, 2]), [2, 1]))
        ),
        "split": _names(lambda tf: _graph_names(tf, lambda: tf.split(tf.constant([1, 2]), 2))),
        "reduce_sum": _names(
            lambda tf: _graph_names(tf, lambda: tf.reduce_sum(tf.constant([1, 2])))
        ),
        "zeros": _names(lambda tf: _graph_names(tf, lambda: tf.zeros([2, 2]))),
        "ones_named": _names(lambda tf: _graph_names(tf, lambda: tf.ones([3], name="o"))),
        "random_normal": _names(lambda tf: _graph_names(tf, lambda: tf.random_normal([2]))),
        "random_uniform": _names(lambda tf: _graph_names(tf, lambda: tf.random_uniform([2]))),
        "variable": _names(lambda tf: _graph_names(tf, lambda: tf.Variable(1.0))),
        "variable_read_value": _names(
            lambda tf: _graph_names(tf, lambda: tf.Variable(1.0).read_value())
        ),
        "variable_assign": _names(
            lambda tf: _graph_names(tf, lambda: tf.Variable(1.0).assign(2.0))
        ),
        "variable_assign_add": _names(
            lambda tf: _graph_names(tf, lambda: tf.Variable(1.0).assign_add(2.0))
        ),
        "global_variables_initializer": _names(
            lambda tf: _graph_names(
                tf, lambda: (tf.Variable(1.0), tf.global_variables_initializer())
            )
        ),
        "group": _names(
            lambda tf: _graph_names(tf, lambda: tf.group(tf.constant(1), tf.constant(2)))
        ),
        "tuple": _names(
            lambda tf: _graph_names(tf, lambda: tf.tuple([tf.constant(1), tf.constant(2)]))
        ),
        "identity_in_scope": _names(
            lambda tf: _graph_names(tf, lambda: tf.identity(tf.constant(1), name="a/b"))
        ),
        "placeholder_default": _names(
            lambda tf: _graph_names(tf, lambda: tf.placeholder(tf.float32))
        ),
        "add_n": _names(
            lambda tf: _graph_names(tf, lambda: tf.add_n([tf.constant(1), tf.constant(2)]))
        ),
        "stack": _names(
            lambda tf: _graph_names(tf, lambda: tf.stack([tf.constant(1), tf.constant(2)]))
        ),
        "gather": _names(lambda tf: _graph_names(tf, lambda: tf.gather(tf.constant([1, 2]), [0]))),
        "cast": _names(lambda tf: _graph_names(tf, lambda: tf.cast(tf.constant(1), tf.float32))),
        "softmax": _names(lambda tf: _graph_names(tf, lambda: tf.nn.softmax(tf.constant([1.0])))),
        "reduce_mean_keepdims": _names(
            lambda tf: _graph_names(
                tf, lambda: tf.reduce_mean(tf.constant([[1.0]]), 1, keepdims=True)
            )
        ),
    },
)


def _in_scopes(tf: Any, scopes: list[Any], name: str | None = None) -> list[Any]:
    if not scopes:
        return [tf.constant(0.0, name=name)]
    with tf.name_scope(scopes[0]):
        return _in_scopes(tf, scopes[1:], name)


def _scope_strings(tf: Any, scopes: list[Any]) -> list[str]:
    if not scopes:
        return []
    with tf.name_scope(scopes[0]) as scope:
        return [scope, *_scope_strings(tf, scopes[1:])]


def _get_name_scope(tf: Any, scopes: list[str]) -> list[str]:
    if not scopes:
        return [tf.get_default_graph().get_name_scope()]
    with tf.name_scope(scopes[0]):
        return [tf.get_default_graph().get_name_scope(), *_get_name_scope(tf, scopes[1:])]


def _graph_names(tf: Any, build: Callable[[], Any]) -> list[str]:
    build()
    return [f"{op.name} {op.type}" for op in tf.get_default_graph().get_operations()]


@program
def names_consumers(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    b = tf.identity(a, name="b")
    c = tf.add(a, b, name="c")
    return Note(
        a=[op.name for op in a.consumers()],
        b=[op.name for op in b.consumers()],
        c=[op.name for op in c.consumers()],
    )


@program
def names_variable_consumers(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    tf.identity(v, name="r")
    return Note(v=sorted(op.name for op in v.op.outputs[0].consumers()))


@program
def names_get_by_name(tf: Any) -> Any:
    tf.constant(1.0, name="a")
    graph = tf.get_default_graph()
    return Note(op=graph.get_operation_by_name("a").type, t=graph.get_tensor_by_name("a:0").name)


@program
def names_tensor_attributes(tf: Any) -> Any:
    a = tf.split(tf.constant([1.0, 2.0]), 2, name="sp")[1]
    return Note(name=a.name, op=a.op.name, index=a.value_index, dtype=a.dtype.name)


family(
    "bad_name",
    {
        "colon": lambda tf: tf.constant(1.0, name="x:0"),
        "nul": lambda tf: tf.constant(1.0, name="a\0b"),
        "space": lambda tf: tf.constant(1.0, name="a b"),
        "leading_dash": lambda tf: tf.constant(1.0, name="-a"),
        "empty": lambda tf: tf.constant(1.0, name=""),
        "underscore_start": lambda tf: tf.constant(1.0, name="_a"),
        "variable_colon": lambda tf: tf.Variable(1.0, name="v:0"),
        "name_scope_colon": lambda tf: _in_scopes(tf, ["a:b"]),
        "name_scope_space": lambda tf: _in_scopes(tf, ["a b"]),
    },
    error=["not a valid"],
)

family(
    "odd_name",
    {
        "double_slash": lambda tf: Note(name=tf.constant(1.0, name="a//b").name),
        "trailing_slash": lambda tf: Note(name=tf.identity(tf.constant(1.0), name="a/").name),
        "dot_start": lambda tf: Note(name=tf.constant(1.0, name=".a").name),
        "dash_inside": lambda tf: Note(name=tf.constant(1.0, name="a-b.c_d").name),
        "digit_start": lambda tf: Note(name=tf.constant(1.0, name="1a").name),
    },
)


# -- device strings ------------------------------------------------------------------------------


def _spec(text: str) -> Build:
    def build(tf: Any) -> Any:
        spec = tf.DeviceSpec.from_string(text)
        return Note(
            string=spec.to_string(),
            fields=[spec.job, spec.replica, spec.task, spec.device_type, spec.device_index],
        )

    return build


_SPECS = {
    "empty": "",
    "cpu0": "/cpu:0",
    "gpu1_lower": "/gpu:1",
    "device_gpu": "/device:GPU:2",
    "device_type_only": "/device:GPU",
    "any_index": "/device:GPU:*",
    "cpu_star": "/cpu:*",
    "job": "/job:ps",
    "job_task": "/job:worker/task:3",
    "full": "/job:w/replica:1/task:2/device:CPU:3",
    "full_legacy": "/job:w/replica:1/task:2/gpu:3",
    "no_leading_slash": "job:w/task:1",
    "order_free": "/task:1/job:w",
    "upper_job": "/job:Work_1",
    "custom_type": "/device:XLA_CPU:0",
    "trailing_slash": "/job:w/",
    "device_lowercase_type": "/device:gpu:0",
}
_BAD_SPECS = {
    "unknown_key": "/foo:bar",
    "replica_not_int": "/replica:x",
    "task_not_int": "/task:one",
    "device_index_not_int": "/device:GPU:x",
    "too_many_parts": "/device:GPU:0:1",
    "gpu_not_int": "/gpu:z",
}
family("device_spec", {key: _spec(text) for key, text in _SPECS.items()})
family("device_spec_bad", {key: _spec(text) for key, text in _BAD_SPECS.items()})


def _requested(spec: Any) -> Build:
    def build(tf: Any) -> Any:
        with tf.device(spec):
            c = tf.constant(1.0, name="c")
        return Note(device=c.device, op=c.op.device)

    return build


family("device_request", {key: _requested(text) for key, text in _SPECS.items()})
family("device_request_bad", {key: _requested(text) for key, text in _BAD_SPECS.items()})


@program
def device_spec_constructor(tf: Any) -> Any:
    spec = tf.DeviceSpec(job="ps", task=1, device_type="GPU", device_index=0)
    return Note(string=spec.to_string())


@program
def device_spec_merge(tf: Any) -> Any:
    spec = tf.DeviceSpec.from_string("/job:ps/device:CPU:0")
    spec.merge_from(tf.DeviceSpec.from_string("/task:2/device:GPU:1"))
    return Note(string=spec.to_string())


@program
def device_function_result_stored_as_returned(tf: Any) -> Any:
    with tf.device(lambda op: "/gpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.device(lambda op: "cpu:1"):
        b = tf.constant(1.0, name="b")
    return Note(a=a.device, b=b.device)


@program
def device_function_returning_spec(tf: Any) -> Any:
    with tf.device(lambda op: tf.DeviceSpec(job="ps", device_type="CPU")):
        a = tf.constant(1.0, name="a")
    return Note(a=a.device)


@program
def device_function_nested_in_string_scope(tf: Any) -> Any:
    with tf.device("/job:w/task:1"), tf.device(lambda op: "/gpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.device(lambda op: "/gpu:0"), tf.device("/task:2"):
        b = tf.constant(1.0, name="b")
    return Note(a=a.device, b=b.device)


@program
def device_scope_merge_strings(tf: Any) -> Any:
    with tf.device("/job:w/task:1"), tf.device("/gpu:0"):
        a = tf.constant(1.0, name="a")
        with tf.device("/job:ps"):
            b = tf.constant(1.0, name="b")
        with tf.device("/device:CPU:*"):
            c = tf.constant(1.0, name="c")
    return Note(a=a.device, b=b.device, c=c.device)


@program
def device_of_tensor(tf: Any) -> Any:
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    return Note(tensor=a.device, op=a.op.device)


# -- control dependencies ------------------------------------------------------------------------


@program
def control_dependencies_inputs(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a, b.op]):
        c = tf.constant(3.0, name="c")
        d = tf.identity(a, name="d")
    return [c, d]


@program
def control_dependencies_none_clears(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]), tf.control_dependencies(None):
        c = tf.constant(3.0, name="c")
    return c


@program
def control_dependencies_nested(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]), tf.control_dependencies([b]):
        c = tf.constant(3.0, name="c")
    return c


@program
def control_dependencies_run_side_effect(tf: Any) -> Any:
    v = tf.Variable(0, name="v")
    inc = tf.assign_add(v, 1)
    with tf.control_dependencies([inc]):
        n = tf.no_op(name="n")
    return Runs(v.initializer, n, n, v)


@program
def control_dependencies_on_tensor_from_inner_op(tf: Any) -> Any:
    """An op whose data input is already a control input gets no duplicate control edge."""
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        b = tf.identity(a, name="b")
    return b


@program
def group_runs_all(tf: Any) -> Any:
    v = tf.Variable(0, name="v")
    w = tf.Variable(10, name="w")
    g = tf.group(tf.assign_add(v, 1), tf.assign_add(w, -1), name="g")
    return Runs(tf.global_variables_initializer(), g, [v, w])


@program
def tuple_gates_values(tf: Any) -> Any:
    a, b = tf.tuple([tf.constant(1.0, name="a"), tf.constant(2.0, name="b")])
    return [a, b]


# -- gradients -----------------------------------------------------------------------------------


@program
def gradients_square(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0], name="x")
    y = tf.reduce_sum(tf.square(x), name="y")
    return tf.gradients(y, x)


@program
def gradients_sum_over_one_axis(tf: Any) -> Any:
    x = tf.constant(_X, name="x")
    return tf.gradients(tf.reduce_sum(x, 1), x)


@program
def gradients_mean_keepdims(tf: Any) -> Any:
    x = tf.constant(_X, name="x")
    return tf.gradients(tf.reduce_mean(x, 0, keepdims=True), x)


@program
def gradients_sum_of_partly_known_shape(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    grads = tf.gradients(tf.reduce_sum(x * x), x)
    return Run(grads, {x: np.array(_X, dtype=np.float32)})


@program
def gradients_sub_and_mul_broadcast(tf: Any) -> Any:
    a = tf.constant(_X, name="a")
    b = tf.constant([1.0, 2.0, 3.0], name="b")
    return tf.gradients(tf.reduce_sum((a - b) * b), [a, b])


@program
def gradients_tile(tf: Any) -> Any:
    x = tf.constant([[1.0, 2.0]], name="x")
    return tf.gradients(tf.reduce_sum(tf.tile(x, [3, 2])), x)


@program
def gradients_getitem(tf: Any) -> Any:
    x = tf.constant(_X, name="x")
    return tf.gradients(tf.reduce_sum(x[:, 1:]) + x[0, 0], x)


@program(error=["out of bounds"])
def error_getitem_out_of_range(tf: Any) -> Any:
    return tf.constant([1, 2])[5]


@program
def gradients_concat(tf: Any) -> Any:
    a = tf.constant([[1.0, 2.0]], name="a")
    c = tf.constant([[3.0, 4.0, 5.0]], name="c")
    return tf.gradients(tf.reduce_sum(tf.concat([a, c], -1) * 2.0), [a, c])


@program
def gradients_split_one_piece_used(tf: Any) -> Any:
    b = tf.constant([[3.0], [4.0]], name="b")
    return tf.gradients(tf.reduce_sum(tf.split(b, 2)[0]), b)


@program
def gradients_split_sizes(tf: Any) -> Any:
    b = tf.constant([1.0, 2.0, 3.0], name="b")
    first, rest = tf.split(b, [1, -1])
    return tf.gradients(tf.reduce_sum(first * 3.0) + tf.reduce_sum(rest), b)


@program
def gradients_slice(tf: Any) -> Any:
    x = tf.constant(_X, name="x")
    return tf.gradients(tf.reduce_sum(tf.slice(x, [0, 1], [-1, 2])), x)


@program
def gradients_transpose(tf: Any) -> Any:
    x = tf.constant(_X, name="x")
    return tf.gradients(tf.reduce_sum(tf.transpose(x) * tf.constant([[1.0, 2.0]])), x)


def _grad_of(fn: Callable[[Any, Any], Any]) -> Build:
    def build(tf: Any) -> Any:
        x = tf.constant(_X, name="x")
        return tf.gradients(tf.reduce_sum(fn(tf, x) * 2.0), x)

    return build


family(
    "gradients_of",
    {
        "reshape": _grad_of(lambda tf, x: tf.reshape(x, [3, 2])),
        "expand_squeeze": _grad_of(lambda tf, x: tf.squeeze(tf.expand_dims(x, 0))),
        "stack_unstack": _grad_of(lambda tf, x: tf.stack(tf.unstack(x)[::-1])),
        "div": _grad_of(lambda tf, x: x / tf.constant([1.0, 2.0, 4.0])),
        "max": _grad_of(lambda tf, x: tf.reduce_max(x, 1)),
        "mean_axis": _grad_of(lambda tf, x: tf.reduce_mean(x, 0)),
        "softmax": _grad_of(lambda tf, x: tf.nn.softmax(x) * x),
        "gather": _grad_of(lambda tf, x: tf.gather(x, [1, 1])),
        "sqrt_exp": _grad_of(lambda tf, x: tf.sqrt(tf.exp(x))),
        "matmul": _grad_of(lambda tf, x: tf.matmul(x, x, transpose_b=True)),
        "pow": _grad_of(lambda tf, x: tf.pow(x, tf.constant([1.0, 2.0, 3.0]))),
        "log_tanh_sigmoid": _grad_of(lambda tf, x: tf.log(x) + tf.tanh(x) + tf.sigmoid(x)),
        "abs_neg": _grad_of(lambda tf, x: tf.abs(-x)),
        "maximum": _grad_of(lambda tf, x: tf.maximum(x, tf.constant([2.0, 2.0, 7.0]))),
        "sub_broadcast": _grad_of(lambda tf, x: tf.constant([1.0, 2.0, 3.0]) - x),
        "cast_identity": _grad_of(lambda tf, x: tf.identity(tf.cast(x, tf.float64)) * 3.0),
        "mean_all": _grad_of(lambda tf, x: tf.reduce_mean(x)),
        "min_keepdims": _grad_of(lambda tf, x: tf.reduce_min(x, 0, keepdims=True)),
        "bias_add": _grad_of(lambda tf, x: tf.nn.bias_add(x, tf.constant([1.0, 2.0, 3.0]))),
        "log_softmax": _grad_of(lambda tf, x: tf.nn.log_softmax(x)),
        "softmax_cross_entropy": _grad_of(
            lambda tf, x: tf.nn.softmax_cross_entropy_with_logits_v2(
                labels=tf.constant([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), logits=x
            )
        ),
        "sparse_softmax_cross_entropy": _grad_of(
            lambda tf, x: tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.constant([2, 0]), logits=x
            )
        ),
    },
)


@program
def gradients_matmul(tf: Any) -> Any:
    a = tf.constant([[1.0, 2.0]], name="a")
    b = tf.constant([[3.0], [4.0]], name="b")
    y = tf.matmul(a, b, name="y")
    return tf.gradients(y, [a, b])


@program
def gradients_grad_ys(tf: Any) -> Any:
    x = tf.constant(3.0, name="x")
    y = x * x
    return tf.gradients(y, x, grad_ys=tf.constant(2.0, name="g"))


@program
def gradients_unconnected_is_none(tf: Any) -> Any:
    x = tf.constant(3.0, name="x")
    z = tf.constant(1.0, name="z")
    y = x * 2.0
    grads = tf.gradients(y, [x, z])
    return Note(none=[g is None for g in grads])


@program
def gradients_add_broadcast(tf: Any) -> Any:
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
    b = tf.constant([1.0, 1.0], name="b")
    y = tf.reduce_sum(a + b, name="y")
    return tf.gradients(y, [a, b])


@program
def gradients_two_paths(tf: Any) -> Any:
    x = tf.constant(2.0, name="x")
    y = x * x + x
    return tf.gradients(y, x)


@program
def gradients_relu_sigmoid(tf: Any) -> Any:
    x = tf.constant([-1.0, 0.5], name="x")
    y = tf.reduce_sum(tf.nn.relu(x) + tf.sigmoid(x))
    return tf.gradients(y, x)


@program
def gradients_of_variable(tf: Any) -> Any:
    v = tf.Variable([1.0, 2.0], name="v")
    loss = tf.reduce_sum(v * v, name="loss")
    return Runs(v.initializer, tf.gradients(loss, v))


@program(cpus=4)
def gradients_colocated_with_ops(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        x = tf.constant([1.0, 2.0], name="x")
        h = tf.square(x, name="h")
    with tf.device("/cpu:2"):
        y = tf.reduce_sum(h, name="y")
    return tf.gradients(y, x, colocate_gradients_with_ops=True)


@program(cpus=4)
def gradients_not_colocated(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        x = tf.constant([1.0, 2.0], name="x")
        h = tf.square(x, name="h")
    with tf.device("/cpu:2"):
        y = tf.reduce_sum(h, name="y")
    return tf.gradients(y, x)


@program
def gradients_name_scope(tf: Any) -> Any:
    x = tf.constant(1.0, name="x")
    y = tf.multiply(x, x, name="y")
    g = tf.gradients(y, x, name="grads")
    return Note(name=g[0].name)


# -- optimizers ----------------------------------------------------------------------------------


def _linear_loss(tf: Any) -> tuple[Any, Any]:
    w = tf.Variable([1.0, 2.0], name="w")
    x = tf.constant([3.0, 4.0], name="x")
    return w, tf.reduce_sum(w * x, name="loss")


@program
def optimizer_gradient_descent_step(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, w)


@program
def optimizer_gradient_descent_two_steps(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, step, [w, loss])


@program
def optimizer_momentum_step(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    step = tf.train.MomentumOptimizer(0.1, momentum=0.9).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, step, w)


@program
def optimizer_adam_step(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    step = tf.train.AdamOptimizer(0.1).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, step, w)


@program
def optimizer_global_step(tf: Any) -> Any:
    _, loss = _linear_loss(tf)
    gs = tf.train.get_or_create_global_step()
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return Runs(tf.global_variables_initializer(), step, step, gs)


@program
def optimizer_compute_and_apply(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    opt = tf.train.GradientDescentOptimizer(1.0)
    grads = opt.compute_gradients(loss)
    step = opt.apply_gradients(grads)
    return Runs(tf.global_variables_initializer(), [g for g, _ in grads], step, w)


@program
def optimizer_var_list(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    b = tf.Variable(1.0, name="b")
    total = loss + b
    step = tf.train.GradientDescentOptimizer(1.0).minimize(total, var_list=[b])
    return Runs(tf.global_variables_initializer(), step, [w, b])


@program
def optimizer_slot_names(tf: Any) -> Any:
    w, loss = _linear_loss(tf)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    opt.minimize(loss)
    return Note(slots=opt.get_slot_names(), slot=opt.get_slot(w, "momentum").name)


@program
def optimizer_adam_variables(tf: Any) -> Any:
    _, loss = _linear_loss(tf)
    tf.train.AdamOptimizer(0.1).minimize(loss)
    return Note(variables=[v.name for v in tf.global_variables()])


@program(cpus=4)
def optimizer_slots_follow_variable(tf: Any) -> Any:
    with tf.device("/cpu:2"):
        w = tf.Variable([1.0, 2.0], name="w")
    loss = tf.reduce_sum(w * w, name="loss")
    step = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, w)


@program(cpus=4)
def optimizer_adam_placement(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
    with tf.device("/cpu:3"):
        loss = tf.reduce_sum(w * w, name="loss")
    step = tf.train.AdamOptimizer(0.1).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, w)


@program(cpus=4)
def optimizer_under_device_scope(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
    loss = tf.reduce_sum(w * w, name="loss")
    with tf.device("/cpu:2"):
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return Runs(tf.global_variables_initializer(), step, w)


@program(cpus=4)
def optimizer_colocate_gradients(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, 2.0], name="w")
        h = tf.square(w, name="h")
    with tf.device("/cpu:3"):
        loss = tf.reduce_sum(h, name="loss")
    opt = tf.train.GradientDescentOptimizer(0.1)
    step = opt.minimize(loss, colocate_gradients_with_ops=True)
    return Runs(tf.global_variables_initializer(), step, w)


@program(error=["No gradients provided for any variable"])
def error_optimizer_no_gradients(tf: Any) -> Any:
    tf.Variable(1.0, name="w")
    loss = tf.constant(1.0, name="loss")
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss)


@program(error=["No variables to optimize"])
def error_optimizer_no_variables(tf: Any) -> Any:
    loss = tf.constant(1.0, name="loss")
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss)


# -- random ops: placement and shapes, not values -------------------------------------------------


@program(skip=["values"])
def random_normal_shape(tf: Any) -> Any:
    return tf.random_normal([2, 3], seed=1)


@program(skip=["values"])
def random_uniform_shape(tf: Any) -> Any:
    return tf.random_uniform([4], minval=0, maxval=1, seed=1)


@program(skip=["values"], cpus=4)
def random_normal_pinned(tf: Any) -> Any:
    with tf.device("/cpu:2"):
        r = tf.random_normal([2], seed=3, name="r")
    return r


@program
def random_uniform_bounds(tf: Any) -> Any:
    r = tf.random_uniform([100], minval=2.0, maxval=3.0, seed=4)
    return tf.logical_and(tf.reduce_min(r) >= 2.0, tf.reduce_max(r) < 3.0)


@program
def math_range(tf: Any) -> Any:
    return [
        tf.range(5),
        tf.range(1, 7, 2),
        tf.range(tf.constant(3)),
        tf.range(0.0, 1.0, 0.25),
        tf.range(2, dtype=tf.int64),
        tf.range(tf.constant(1), 4.0),
    ]


@program
def math_logical_ops(tf: Any) -> Any:
    a, b = tf.constant([True, False, True]), tf.constant([True, True, False])
    return [
        tf.logical_and(a, b),
        tf.logical_or(a, b),
        tf.logical_not(a),
        tf.logical_xor(a, b),
        tf.logical_and(a, True),
        a & b,
        a | b,
        ~a,
        tf.equal(tf.constant(1), 1),
    ]


@program
def random_uniform_int(tf: Any) -> Any:
    r = tf.random_uniform([50], minval=0, maxval=3, dtype=tf.int32, seed=5)
    return tf.reduce_max(r) < 3


# -- sessions ------------------------------------------------------------------------------------


@program
def session_run_operation_returns_none(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, [v.initializer, v])


@program
def session_fetch_variable_and_read(tf: Any) -> Any:
    v = tf.Variable(1.0, name="v")
    return Runs(v.initializer, [v, v.value(), v.read_value()])


@program
def session_eval_shape_attributes(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.reduce_sum(x, axis=1)
    return Note(x=x.shape.as_list(), y=y.shape.as_list(), rank=y.shape.ndims)


@program
def session_placeholder_shape_unknown(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, name="x")
    return Note(ndims=x.shape.ndims, text=str(x.shape))


# -- Shape, Size, Rank: values, names, and where they go when their input is pinned ----------

family(
    "shape_ops",
    {
        "shape": lambda tf: tf.shape(tf.constant(_X)),
        "shape_int64": lambda tf: tf.shape(tf.constant(_X), out_type=tf.int64),
        "size": lambda tf: tf.size(tf.constant(_X)),
        "rank": lambda tf: tf.rank(tf.constant(_X)),
        "shape_of_placeholder": lambda tf: _fed_shape(tf),
        "names": lambda tf: Note(
            names=[tf.shape(tf.constant(1.0)).name, tf.size([1]).name, tf.rank([[1]]).name]
        ),
    },
)


def _fed_shape(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    return Run(tf.shape(x), {x: np.zeros((3, 2), np.float32)})


def _metadata_of_pinned_input(kind: str) -> Build:
    def build(tf: Any) -> Any:
        with tf.device("/cpu:2"):
            x = tf.identity(tf.constant(_X), name="x")
        return getattr(tf, kind)(x, name="m")

    return build


family(
    "cpus4_metadata_op_of_pinned_input",
    {kind: _metadata_of_pinned_input(kind) for kind in ("shape", "size", "rank")},
    cpus=4,
)


# -- replica_device_setter: cases of TensorFlow's device_setter_test.py ---------------------------

_PS_WORKER = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222", "worker1:2222"]}
_SUN_MOON = {"sun": ["sun0:2222", "sun1:2222", "sun2:2222"], "moon": ["moon0:2222", "moon1:2222"]}


def _setter_devices(*variables: Any, **others: Any) -> Note:
    found = {f"v{i}": [v.device, v.initializer.device] for i, v in enumerate(variables)}
    return Note(**found, **{name: t.device for name, t in others.items()})


@program
def device_setter_cpu_override(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(_PS_WORKER))):
        with tf.device("/cpu:0"):
            v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        with tf.device("/cpu:0"):
            a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_pin_variable_to_job(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(_PS_WORKER))):
        v = tf.Variable([1, 2])
        with tf.device("/job:moon"):
            w = tf.Variable([2, 1])
            with tf.device("/job:ps"):
                x = tf.Variable([0, 1])
        a = v + w + x
    return _setter_devices(v, w, x, a=a)


@program
def device_setter_cpu_ps_device(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, ps_device="/cpu:0")):
        v = tf.Variable([1, 2])
        with tf.device("/job:moon"):
            w = tf.Variable([2, 1])
        a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_no_merging(tf: Any) -> Any:
    cluster = tf.train.ClusterSpec(_PS_WORKER)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, merge_devices=False)):
        v = tf.Variable([1, 2])
        with tf.device("/job:ps"):
            w = tf.Variable([2, 1])
        a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_cluster_dict(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(cluster=_PS_WORKER)):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_cluster_def(tf: Any) -> Any:
    cluster = tf.train.ClusterSpec(_PS_WORKER).as_cluster_def()
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_other_job_names(tf: Any) -> Any:
    setter = tf.train.replica_device_setter(
        ps_device="/job:moon", worker_device="/job:sun", cluster=tf.train.ClusterSpec(_SUN_MOON)
    )
    with tf.device(setter):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_ps_cpu_constraint(tf: Any) -> Any:
    setter = tf.train.replica_device_setter(
        ps_device="/job:moon/cpu:0",
        worker_device="/job:sun",
        cluster=tf.train.ClusterSpec(_SUN_MOON),
    )
    with tf.device(setter):
        v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        a = v + w
    return _setter_devices(v, w, a=a)


@program
def device_setter_ps_ops_types(tf: Any) -> Any:
    """Only variable ops go to the ps job unless ps_ops names more."""
    setter = tf.train.replica_device_setter(ps_tasks=2, ps_ops=["VariableV2", "Variable", "Const"])
    with tf.device(setter):
        c = tf.constant(1.0, name="c")
        v = tf.Variable(1.0, name="v")
        y = v * c
    return Note(c=c.device, v=v.device, y=y.device)


@program(cpus=4)
def device_setter_runs_locally(tf: Any) -> Any:
    """With local devices as ps and worker, the setter's requests place ops on real CPUs."""
    setter = tf.train.replica_device_setter(ps_tasks=1, ps_device="/cpu:1", worker_device="/cpu:2")
    with tf.device(setter):
        v = tf.Variable([1.0, 2.0], name="v")
        y = tf.reduce_sum(v * 3.0, name="y")
    return Runs(v.initializer, y)


# -- colocation groups and requests: cases of TensorFlow's ops_test.py (graph facts only) --------


@program
def colocation_basic(tf: Any) -> None:
    a = tf.constant([2.0], name="a")
    with tf.colocate_with(a.op):
        tf.constant(3.0, name="b")
    with tf.device("/cpu:0"):
        c = tf.constant(4.0, name="c")
    with tf.colocate_with(c.op):
        tf.constant(5.0, name="d")


@program
def colocation_device_interaction(tf: Any) -> None:
    with tf.device("/cpu:0"):
        with tf.device("/device:GPU:0"):
            a = tf.constant([2.0], name="a")
        with tf.colocate_with(a.op):
            tf.constant(3.0, name="b")


@program
def colocation_location_overrides(tf: Any) -> None:
    with tf.device("/cpu:0"):
        with tf.device("/device:GPU:0"):
            a = tf.constant([2.0], name="a")
            with tf.colocate_with(a.op):
                tf.constant(3.0, name="b")
            tf.constant(4.0, name="c")
        tf.constant(5.0, name="d")


@program
def colocation_nested_same_group(tf: Any) -> None:
    a = tf.constant([2.0], name="a")
    with tf.colocate_with(a.op):
        b = tf.constant(3.0, name="b")
        with tf.colocate_with(b.op):
            tf.constant(4.0, name="c")


@program
def colocation_multiple_groups(tf: Any) -> None:
    a = tf.constant([2.0], name="a")
    b = tf.constant(3.0, name="b")
    with tf.colocate_with(a.op), tf.colocate_with(b.op):
        tf.constant(4.0, name="c")


@program
def colocation_ignore_stack(tf: Any) -> None:
    a = tf.constant([2.0], name="a")
    b = tf.constant(3.0, name="b")
    with tf.colocate_with(a.op), tf.colocate_with(b.op, ignore_existing=True):
        tf.constant(4.0, name="c")


@program
def colocation_reset_with_none(tf: Any) -> None:
    a = tf.constant([2.0], name="a")
    with tf.colocate_with(a.op):
        tf.constant(3.0, name="b")
        with tf.colocate_with(None, ignore_existing=True):
            tf.constant(4.0, name="c")


@program
def colocation_none_then_nested(tf: Any) -> None:
    a = tf.constant([2.0], name="a")
    with tf.colocate_with(a.op), tf.colocate_with(None, ignore_existing=True):
        b = tf.constant(3.0, name="b")
        with tf.colocate_with(b.op):
            tf.constant(4.0, name="c")
        tf.constant(5.0, name="d")


@program
def colocation_variable_assign_requested_elsewhere(tf: Any) -> None:
    with tf.device("/job:ps"):
        v = tf.Variable(0, name="v")
    with tf.device("/job:worker/task:7"):
        v.assign(1)


@program
def colocation_with_pinned_then_inner_device(tf: Any) -> None:
    with tf.device("/job:ps/task:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a), tf.device("/job:worker"):
        tf.constant(2.0, name="b")


# -- the placer: cases of TensorFlow's placer_test.cc, on four CPUs ------------------------------


@program(cpus=4)
def placer_pinned_generator_keeps_its_pin(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:2"):
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def placer_generator_with_control_consumer(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    with tf.device("/cpu:2"):
        b = tf.identity(a, name="b")
    with tf.device("/cpu:3"), tf.control_dependencies([a]):
        c = tf.constant(2.0, name="c")
    return [b, c]


@program(cpus=4)
def placer_generator_chain(tf: Any) -> Any:
    """Only a source op follows its consumer; an op between them stays on the default device."""
    a = tf.constant(1.0, name="a")
    b = tf.identity(a, name="b")
    with tf.device("/cpu:3"):
        c = tf.identity(b, name="c")
    return c


@program(cpus=4)
def placer_colocation_group_takes_member_pin(tf: Any) -> Any:
    a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.constant(2.0, name="b")
    b.op._set_device("/cpu:3")
    return a + b


@program(cpus=4)
def placer_reference_edge_with_conflicting_pin(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    a = tf.assign(v, 2.0, name="a")
    a.op._set_device("/cpu:2")
    return Runs(v.initializer, a)


@program(cpus=4, soft=True)
def placer_reference_edge_with_conflicting_pin_soft(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    a = tf.assign(v, 2.0, name="a")
    a.op._set_device("/cpu:2")
    return Runs(v.initializer, a)


@program(cpus=4)
def placer_colocation_and_reference_edges(tf: Any) -> Any:
    with tf.device("/cpu:2"):
        v = tf.Variable(1.0, name="v")
    with tf.colocate_with(v):
        w = tf.Variable(2.0, name="w")
    return Runs(tf.global_variables_initializer(), w)


@program(cpus=4)
def placer_partial_job_spec(tf: Any) -> Any:
    with tf.device("/job:localhost/device:CPU:*"):
        a = tf.constant(1.0, name="a")
    with tf.device("/replica:0/task:0/cpu:2"):
        b = tf.identity(a, name="b")
    return b


@program(cpus=4)
def placer_two_variables_in_one_expression(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/cpu:2"):
        w = tf.Variable(2.0, name="w")
    with tf.device("/cpu:3"):
        s = tf.add(v, w, name="s")
    return Runs(tf.global_variables_initializer(), s)


# TensorFlow 2.21 accepts a double slash in every kind of name.
family(
    "double_slash",
    {
        "name_scope": lambda tf: Note(names=[t.name for t in _in_scopes(tf, ["a//b"])]),
        "variable": lambda tf: Note(name=tf.Variable(1.0, name="a//b").name),
        "get_variable": lambda tf: Note(name=tf.get_variable("a//b", shape=[1]).name),
        "inside_scope": lambda tf: Note(names=[t.name for t in _in_scopes(tf, ["x"], "a//b")]),
    },
)


# Each area's programs live in a module of their own; importing them declares them.
from conformance import (  # noqa: E402, F401
    programs_activations,
    programs_batchnorm,
    programs_classify,
    programs_control_flow,
    programs_conv,
    programs_denormals,
    programs_keras,
    programs_linalg,
    programs_rnn,
    programs_saver,
    programs_sync,
    programs_tensor_array,
    programs_train,
    programs_variables,
    programs_zoo,
)
