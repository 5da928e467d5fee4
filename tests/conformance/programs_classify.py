"""Conformance programs: classification and NLP ops: argmax, one_hot, top_k, cumsum, where,
dropout, embeddings (issue 24, item 3)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []

_X = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], dtype=np.float32)
_CUBE = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 7
_TABLE = np.arange(12, dtype=np.float32).reshape(6, 2)


def _x(tf: Any) -> Any:
    return tf.constant(_X, name="x")


def _fed(fn: Callable[[Any, Any], Any], value: Any, dtype: str = "int32") -> Callable[[Any], Any]:
    """``fn(tf, p)`` of a scalar placeholder fed ``value`` (a value only the run knows)."""

    def build(tf: Any) -> Any:
        p = tf.placeholder(getattr(tf, dtype), [], name="p")
        return Run(fn(tf, p), {p: value})

    return build


# -- ArgMax, ArgMin ------------------------------------------------------------------------------
family(
    "cls_argmax",
    {
        "rows": lambda tf: tf.argmax(_x(tf), 1),
        "columns": lambda tf: tf.argmax(_x(tf), 0),
        "default_axis": lambda tf: tf.argmax(_x(tf)),
        "negative_axis": lambda tf: tf.argmax(_x(tf), -1),
        "int32_output": lambda tf: tf.argmax(_x(tf), 1, output_type=tf.int32),
        "dimension": lambda tf: tf.argmax(_x(tf), dimension=1, name="pick"),
        "ties_take_first": lambda tf: tf.argmax(tf.constant([[3, 3, 1], [0, 2, 2]]), 1),
        "nan_never_wins": lambda tf: tf.argmax(tf.constant([1.0, np.nan, 3.0])),
        "python_list": lambda tf: tf.argmax([[1, 4], [3, 2]], 1),
        "cube_last": lambda tf: tf.argmax(tf.constant(_CUBE), 2),
        "math_namespace": lambda tf: tf.math.argmax(tf.constant(_CUBE), 1),
        "axis_fed": _fed(lambda tf, p: tf.argmax(tf.constant(_CUBE), p), 1),
        "argmin_rows": lambda tf: tf.argmin(_x(tf), 1),
        "argmin_int32": lambda tf: tf.argmin(_x(tf), 0, output_type=tf.int32, name="low"),
        "argmin_math": lambda tf: tf.math.argmin(tf.constant([[2, 0, 0], [1, 1, 0]]), 1),
    },
)


@program(cpus=2)
def cls_argmax_pinned_cpu1(tf: Any) -> Any:
    x = _x(tf)
    with tf.device("/cpu:1"):
        best = tf.argmax(x, 1)
    return best, tf.one_hot(best, 3)


@program(error=["Dimension (2) must be in the range [-2, 2)"])
def cls_argmax_error_axis_out_of_range(tf: Any) -> Any:
    return tf.argmax(_x(tf), 2)


@program(error=["Expected dimension in the range [-3, 3), but got 5"])
def cls_argmax_error_fed_axis_out_of_range(tf: Any) -> Any:
    return _fed(lambda tf, p: tf.argmax(tf.constant(_CUBE), p), 5)(tf)


@program(error=["not in list of allowed values"])
def cls_argmax_error_float_output_type(tf: Any) -> Any:
    return tf.argmax(_x(tf), 1, output_type=tf.float32)


@program(error=["Cannot specify both 'dimension' and 'axis'."])
def cls_argmax_error_axis_and_dimension(tf: Any) -> Any:
    return tf.argmax(_x(tf), 0, dimension=1)


@program(error=["Reduction axis 0 is empty in shape [0,3]"])
def cls_argmax_error_empty_axis(tf: Any) -> Any:
    return tf.argmax(tf.zeros([0, 3]), 0)


# -- OneHot --------------------------------------------------------------------------------------
family(
    "cls_one_hot",
    {
        "python_list": lambda tf: tf.one_hot([1, 2, 0], 3),
        "tensor_indices": lambda tf: tf.one_hot(tf.constant([2, 0]), 4),
        "on_off_axis0": lambda tf: tf.one_hot(
            tf.constant([1, 2]), 3, on_value=5, off_value=-1, axis=0
        ),
        "dtype_int64": lambda tf: tf.one_hot(tf.constant([1, 2]), 3, dtype=tf.int64),
        "on_value_only": lambda tf: tf.one_hot(tf.constant([1, 2]), 3, on_value=2.0),
        "matrix_axis1": lambda tf: tf.one_hot(tf.constant([[0, 2], [1, 1]]), 3, axis=1),
        "int64_indices": lambda tf: tf.one_hot(tf.constant([3, 0], dtype=tf.int64), 4, name="hot"),
        "outside_depth_is_off": lambda tf: tf.one_hot(tf.constant([1, -1, 7]), 3),
        "bool_values": lambda tf: tf.one_hot([1], 3, on_value=True, off_value=False),
        "depth_fed": _fed(lambda tf, p: tf.one_hot(tf.constant([1, 3]), p), 5),
        "of_argmax": lambda tf: tf.one_hot(tf.argmax(_x(tf), 1), 3),
    },
)


@program(error=["must be non-negative but is -1"])
def cls_one_hot_error_negative_depth(tf: Any) -> Any:
    return tf.one_hot([1, 2], -1)


@program(error=["depth must be non-negative, got: -2"])
def cls_one_hot_error_fed_negative_depth(tf: Any) -> Any:
    return _fed(lambda tf, p: tf.one_hot(tf.constant([1, 2]), p), -2)(tf)


@program(error=["axis must be >= -1"])
def cls_one_hot_error_axis_below_minus_one(tf: Any) -> Any:
    return tf.one_hot([1, 2], 3, axis=-2)


@program(error=["Expected axis to be -1 or between [0, 2).  But received: 2"])
def cls_one_hot_error_axis_past_the_end(tf: Any) -> Any:
    return tf.one_hot([1, 2], 3, axis=2)


@program(error=["of on_value does not match dtype parameter"])
def cls_one_hot_error_on_value_dtype(tf: Any) -> Any:
    return tf.one_hot([1, 2], 3, on_value=1.0, dtype=tf.int32)


@program(error=["of on_value does not match dtype", "of off_value"])
def cls_one_hot_error_on_off_dtypes(tf: Any) -> Any:
    return tf.one_hot([1, 2], 3, on_value=1.0, off_value=0)


@program(error=["Value passed to parameter 'indices' has DataType float32"])
def cls_one_hot_error_float_indices(tf: Any) -> Any:
    return tf.one_hot([1.0, 2.0], 3)


# -- TopKV2 --------------------------------------------------------------------------------------
family(
    "cls_top_k",
    {
        "rows": lambda tf: tf.nn.top_k(_x(tf), 2),
        "default_k": lambda tf: tf.nn.top_k(_x(tf)),
        "ties_lower_index_first": lambda tf: tf.nn.top_k(tf.constant([1, 3, 3, 2]), 3),
        "cube": lambda tf: tf.nn.top_k(tf.constant(_CUBE), 2),
        "math_named": lambda tf: tf.math.top_k(_x(tf), 3, name="best"),
        "k_zero": lambda tf: tf.nn.top_k(_x(tf), 0),
        "int64_indices": lambda tf: tf.nn.top_k(_x(tf), 2, index_type=tf.int64).indices,
        "fields": lambda tf: tf.nn.top_k(tf.constant([4.0, 9.0, 1.0]), 2).values,
        "k_fed": _fed(lambda tf, p: tf.nn.top_k(_x(tf), p), 2),
    },
)


@program(error=["input must have last dimension >= k = 5 but is 3"])
def cls_top_k_error_k_too_large(tf: Any) -> Any:
    return tf.nn.top_k(_x(tf), 5)


@program(error=["input must have at least k columns. Had 3, needed 4"])
def cls_top_k_error_fed_k_too_large(tf: Any) -> Any:
    return _fed(lambda tf, p: tf.nn.top_k(_x(tf), p), 4)(tf)


@program(error=["must be non-negative but is -1"])
def cls_top_k_error_negative_k(tf: Any) -> Any:
    return tf.nn.top_k(_x(tf), -1)


@program(error=["Shape must be at least rank 1 but is rank 0"])
def cls_top_k_error_scalar(tf: Any) -> Any:
    return tf.nn.top_k(tf.constant(3.0), 1)


# -- Cumsum --------------------------------------------------------------------------------------
family(
    "cls_cumsum",
    {
        "default_axis": lambda tf: tf.cumsum(_x(tf)),
        "rows": lambda tf: tf.cumsum(_x(tf), 1),
        "exclusive": lambda tf: tf.cumsum(_x(tf), 1, exclusive=True),
        "reverse": lambda tf: tf.cumsum(_x(tf), 1, reverse=True),
        "exclusive_reverse": lambda tf: tf.cumsum(_x(tf), 1, exclusive=True, reverse=True),
        "int_named": lambda tf: tf.cumsum(tf.constant([1, 2, 3]), exclusive=True, name="total"),
        "cube_last": lambda tf: tf.cumsum(tf.constant(_CUBE), -1, reverse=True),
        "python_list": lambda tf: tf.cumsum([1.5, 2.5, 3.0]),
        "math_namespace": lambda tf: tf.math.cumsum(tf.constant(_CUBE), 1, exclusive=True),
    },
)


@program(error=["ScanOp: Expected scan axis in the range [-2, 2), but got 2"])
def cls_cumsum_error_axis_out_of_range(tf: Any) -> Any:
    return tf.cumsum(_x(tf), 2)


@program(error=["ScanOp: Expected scan axis in the range [0, 0), but got 0"])
def cls_cumsum_error_scalar(tf: Any) -> Any:
    return tf.cumsum(tf.constant(3.0))


# -- Where (one argument) and Select -------------------------------------------------------------
family(
    "cls_where",
    {
        "bool_matrix": lambda tf: tf.where(_x(tf) > 2.5),
        "int_nonzero": lambda tf: tf.where(tf.constant([[0, 2], [3, 0]])),
        "float_nonzero": lambda tf: tf.where(tf.constant([0.0, 2.0, 0.5])),
        "python_list": lambda tf: tf.where([True, False, True]),
        "cube": lambda tf: tf.where(tf.constant(_CUBE) > 4.0, name="found"),
        "none_true": lambda tf: tf.where(_x(tf) > 10.0),
        "select": lambda tf: tf.where(_x(tf) > 2.5, _x(tf), tf.zeros([2, 3])),
        "select_python": lambda tf: tf.where([True, False], [1.0, 2.0], [3.0, 4.0]),
    },
)


@program(error=["WhereOp : Unhandled input dimensions: 0"])
def cls_where_error_scalar(tf: Any) -> Any:
    return tf.where(tf.constant(3.0))


@program(error=["x and y must both be non-None or both be None."])
def cls_where_error_x_without_y(tf: Any) -> Any:
    return tf.where(tf.constant([True]), x=tf.constant([1.0]))


# -- gradients -----------------------------------------------------------------------------------
def _grad_of(fn: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    def build(tf: Any) -> Any:
        x = _x(tf)
        return tf.gradients(tf.reduce_sum(fn(tf, x) * tf.constant([[1.0, 2.0], [3.0, 4.0]])), x)

    return build


def _self_grad(fn: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    def build(tf: Any) -> Any:
        x = _x(tf)
        return tf.gradients(fn(tf, x) * x, x)

    return build


def _argmax_grad(tf: Any) -> Any:
    x = _x(tf)
    grads = tf.gradients(tf.one_hot(tf.argmax(x, 1), 3), x)
    return Note(grads=[g is None for g in grads])


family(
    "cls_gradients",
    {
        "top_k": _grad_of(lambda tf, x: tf.nn.top_k(x, 2).values),
        "cumsum": _self_grad(lambda tf, x: tf.cumsum(x, 1)),
        "cumsum_exclusive_reverse": _self_grad(
            lambda tf, x: tf.cumsum(x, 1, exclusive=True, reverse=True)
        ),
        "argmax_one_hot_is_none": _argmax_grad,
    },
)


# -- dropout (random values: the graph and shapes are compared, values only where none drop) -----
family(
    "cls_dropout",
    {
        "keep_prob": lambda tf: tf.nn.dropout(_x(tf), keep_prob=0.5),
        "rate_seeded": lambda tf: tf.nn.dropout(_x(tf), rate=0.3, seed=3),
        "noise_shape": lambda tf: tf.nn.dropout(_x(tf), rate=0.3, noise_shape=[2, 1]),
        "rate_tensor": lambda tf: tf.nn.dropout(_x(tf), rate=tf.constant(0.5)),
        "named_float64": lambda tf: tf.nn.dropout(
            tf.constant(_X, dtype=tf.float64), rate=0.25, name="drop"
        ),
        "graph_seed": lambda tf: (tf.set_random_seed(7), tf.nn.dropout(_x(tf), rate=0.5))[1],
        "keep_prob_tensor": lambda tf: tf.nn.dropout(_x(tf), keep_prob=tf.constant(0.75)),
    },
    skip=("values",),
)


family(
    "cls_dropout_values",
    {
        "rate_zero_is_x": lambda tf: tf.nn.dropout(_x(tf), rate=0.0),
        "keep_prob_one_is_x": lambda tf: tf.nn.dropout(_x(tf), keep_prob=1.0),
        "shape_kept": lambda tf: tf.shape(tf.nn.dropout(_x(tf), rate=0.5)),
    },
)


@program(
    error=["`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate=1.0"]
)
def cls_dropout_error_rate_one(tf: Any) -> Any:
    return tf.nn.dropout(_x(tf), rate=1.0)


@program(error=["`rate` must be a scalar tensor or a float in the range [0, 1)"])
def cls_dropout_error_negative_rate(tf: Any) -> Any:
    return tf.nn.dropout(_x(tf), rate=-0.1)


@program(error=["Cannot specify both 'keep_prob' and 'rate'."])
def cls_dropout_error_keep_prob_and_rate(tf: Any) -> Any:
    return tf.nn.dropout(_x(tf), keep_prob=0.5, rate=0.5)


@program(error=["`x.dtype` must be a floating point tensor as `x` will be scaled."])
def cls_dropout_error_int_input(tf: Any) -> Any:
    return tf.nn.dropout(tf.constant([1, 2]), rate=0.5)


# -- embedding_lookup ----------------------------------------------------------------------------
def _shards(tf: Any, rows: tuple[int, ...] = (3, 3)) -> list[Any]:
    bounds = np.cumsum((0, *rows))
    return [
        tf.constant(_TABLE[a:b], name=f"shard{i}")
        for i, (a, b) in enumerate(itertools.pairwise(bounds))
    ]


def _table_variable(tf: Any) -> Any:
    return tf.Variable(_TABLE, name="emb")


def _with_init(tf: Any, fetch: Any) -> Any:
    return Runs(Run(tf.global_variables_initializer()), Run(fetch))


family(
    "cls_embedding",
    {
        "const_table": lambda tf: tf.nn.embedding_lookup(tf.constant(_TABLE), tf.constant([1, 5])),
        "python_ids_matrix": lambda tf: tf.nn.embedding_lookup(
            tf.constant(_TABLE), [[1, 5], [0, 0]]
        ),
        "variable_table": lambda tf: _with_init(
            tf, tf.nn.embedding_lookup(_table_variable(tf), tf.constant([4, 2, 4]))
        ),
        "int64_ids_named": lambda tf: tf.nn.embedding_lookup(
            tf.constant(_TABLE), tf.constant([3], dtype=tf.int64), name="words"
        ),
        "list_of_one": lambda tf: tf.nn.embedding_lookup([tf.constant(_TABLE)], tf.constant([2])),
        "max_norm": lambda tf: tf.nn.embedding_lookup(
            tf.constant(_TABLE), tf.constant([0, 5]), max_norm=4.0
        ),
        "mod": lambda tf: tf.nn.embedding_lookup(_shards(tf), tf.constant([1, 5, 3])),
        "div": lambda tf: tf.nn.embedding_lookup(
            _shards(tf), tf.constant([1, 5, 3]), partition_strategy="div"
        ),
        "div_uneven": lambda tf: tf.nn.embedding_lookup(
            _shards(tf, (2, 2, 2)), tf.constant([[5, 0], [2, 3]]), partition_strategy="div"
        ),
        "mod_matrix_ids": lambda tf: tf.nn.embedding_lookup(
            _shards(tf, (3, 2, 1)), tf.constant([[5, 0], [2, 3]])
        ),
        "div_three_shards": lambda tf: tf.nn.embedding_lookup(
            _shards(tf, (3, 2, 1)), tf.constant([5, 0, 2, 3, 4]), partition_strategy="div"
        ),
        "mod_max_norm": lambda tf: tf.nn.embedding_lookup(
            _shards(tf), tf.constant([1, 4]), max_norm=3.0
        ),
    },
)


def _dense_grad(tf: Any, params: Any, ids: Any, **kwargs: Any) -> Any:
    """The table's gradient densified (TF's is an IndexedSlices, placeviz's already dense)."""
    looked_up = tf.nn.embedding_lookup(params, ids, **kwargs)
    weights = tf.constant(np.arange(1, 1 + 2 * np.size(ids), dtype=np.float32).reshape(-1, 2))
    loss = tf.reduce_sum(tf.reshape(looked_up, [-1, 2]) * weights)
    tables = params if isinstance(params, list) else [params]
    return [tf.convert_to_tensor(g) for g in tf.gradients(loss, tables)]


family(
    "cls_embedding_gradient",
    {
        "const_table": lambda tf: _dense_grad(tf, tf.constant(_TABLE), [1, 5, 1]),
        "mod_shards": lambda tf: _dense_grad(tf, _shards(tf), [1, 5, 3, 1]),
        "div_shards": lambda tf: _dense_grad(
            tf, _shards(tf, (2, 2, 2)), [[5, 0], [2, 2]], partition_strategy="div"
        ),
    },
    skip=("graph", "assigned"),
)


@program(cpus=2)
def cls_embedding_colocated_with_pinned_table(tf: Any) -> Any:
    """The gather runs where the table is, whatever device scope the lookup is in."""
    with tf.device("/cpu:1"):
        table = _table_variable(tf)
    with tf.device("/cpu:0"):
        rows = tf.nn.embedding_lookup(table, tf.constant([0, 3]))
        out = rows * 2.0
    return _with_init(tf, out)


@program(cpus=2)
def cls_embedding_shards_on_two_devices(tf: Any) -> Any:
    with tf.device("/cpu:0"):
        first = tf.constant(_TABLE[:3], name="shard0")
    with tf.device("/cpu:1"):
        second = tf.constant(_TABLE[3:], name="shard1")
    with tf.device("/cpu:1"):
        return tf.nn.embedding_lookup([first, second], tf.constant([0, 4, 5, 1]))


@program(error=["Value passed to parameter 'indices' has DataType float32"])
def cls_embedding_error_float_ids(tf: Any) -> Any:
    return tf.nn.embedding_lookup(tf.constant(_TABLE), tf.constant([1.0, 5.0]))


@program(error=["indices[1] = 9 is not in [0, 6)"])
def cls_embedding_error_id_out_of_range(tf: Any) -> Any:
    return tf.nn.embedding_lookup(tf.constant(_TABLE), tf.constant([1, 9]))


@program(error=["Unrecognized partition strategy: foo."])
def cls_embedding_error_partition_strategy(tf: Any) -> Any:
    return tf.nn.embedding_lookup(_shards(tf), tf.constant([1]), partition_strategy="foo")


@program(error=["Length of params is currently 0. Need at least one param."])
def cls_embedding_error_no_params(tf: Any) -> Any:
    return tf.nn.embedding_lookup([], tf.constant([1]))


@program(skip=("values",))
def cls_top_k_unsorted(tf: Any) -> Any:
    """TF leaves the order of ``sorted=False`` unspecified; placeviz returns them sorted."""
    return tf.nn.top_k(_x(tf), 2, sorted=False)


@program
def cls_embedding_gradient_graph(tf: Any) -> Any:
    table = tf.constant(_TABLE)
    rows = tf.nn.embedding_lookup(table, tf.constant([1, 5, 1]))
    return tf.gradients(tf.reduce_sum(rows * 3.0), table)


@program
def cls_gradients_stop_at_integer_outputs(tf: Any) -> Any:
    x = _x(tf)
    grads = tf.gradients(tf.reduce_sum(tf.one_hot(tf.argmax(x, 1), 3)), x)
    return Note(grads=[g is None for g in grads])


@program(cpus=2)
def cls_embedding_variable_shards(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        first = tf.Variable(_TABLE[0::2], name="emb0")
    second = tf.Variable(_TABLE[1::2], name="emb1")
    return _with_init(tf, tf.nn.embedding_lookup([first, second], tf.constant([[5, 0], [3, 4]])))


@program
def cls_embedding_fed_ids(tf: Any) -> Any:
    ids = tf.placeholder(tf.int32, [None], name="ids")
    found = tf.nn.embedding_lookup(_shards(tf), ids)
    return Run(found, {ids: [4, 1, 1]})


@program
def cls_embedding_div_shards_of_unknown_size(tf: Any) -> Any:
    first = tf.placeholder(tf.float32, [None, None], name="first")
    second = tf.placeholder(tf.float32, [None, 2], name="second")
    found = tf.nn.embedding_lookup(
        [first, second], tf.constant([4, 0, 2]), partition_strategy="div"
    )
    return Run(found, {first: _TABLE[:3], second: _TABLE[3:]})


def _dropout_gradient(tf: Any) -> Any:
    x = _x(tf)
    return tf.gradients(tf.reduce_sum(tf.nn.dropout(x, rate=0.5, seed=1) * x), x)


program(_dropout_gradient, name="cls_dropout_gradient", skip=("values",))
