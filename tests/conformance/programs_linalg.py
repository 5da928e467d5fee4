"""Conformance programs: rank-N linear algebra (issue 24, item 4): BatchMatMulV2, einsum,
tensordot, and tf.layers.dense on rank-3 inputs."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Run, Runs, program
from conformance.programs import family

__all__: list[str] = []


def _c(tf: Any, shape: tuple[int, ...], name: str | None = None, dtype: Any = np.float32) -> Any:
    """A deterministic operand: 0, 0.1, 0.2, ... (integers 0, 1, 2, ... for integer dtypes)."""
    values = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    if np.issubdtype(values.dtype, np.floating):
        values = values / 10
    return tf.constant(values, name=name)


def _product(fn: Any, *shapes: tuple[int, ...], dtype: Any = np.float32) -> Any:
    """A program that fetches ``fn(tf, *operands)`` of operands named a, b."""

    def build(tf: Any) -> Any:
        return fn(tf, *(_c(tf, s, n, dtype) for s, n in zip(shapes, "ab")))

    return build


def _grad(fn: Any, *shapes: tuple[int, ...]) -> Any:
    """A program that fetches the gradients of ``sum(fn(tf, *operands)²)`` for each operand."""

    def build(tf: Any) -> Any:
        operands = [_c(tf, s, n) for s, n in zip(shapes, "ab")]
        y = fn(tf, *operands)
        return tf.gradients(tf.reduce_sum(y * y), operands)

    return build


# -- BatchMatMulV2: values ---------------------------------------------------------------------
family(
    "linalg_bmm",
    {
        "same_batch": _product(lambda tf, a, b: tf.matmul(a, b), (2, 3, 4), (2, 4, 5)),
        "rank3_by_matrix": _product(lambda tf, a, b: tf.matmul(a, b), (2, 3, 4), (4, 5)),
        "matrix_by_rank3": _product(lambda tf, a, b: tf.matmul(a, b), (3, 4), (2, 4, 5)),
        "broadcast_batch": _product(lambda tf, a, b: tf.matmul(a, b), (1, 3, 2, 4), (2, 1, 4, 3)),
        "rank4": _product(lambda tf, a, b: tf.matmul(a, b), (2, 2, 3, 4), (2, 2, 4, 2)),
        "transpose_a": _product(
            lambda tf, a, b: tf.matmul(a, b, transpose_a=True), (2, 4, 3), (2, 4, 5)
        ),
        "transpose_b": _product(
            lambda tf, a, b: tf.matmul(a, b, transpose_b=True), (2, 3, 4), (2, 5, 4)
        ),
        "adjoint_both": _product(
            lambda tf, a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True), (2, 4, 3), (5, 4)
        ),
        "operator": _product(lambda tf, a, b: a @ b, (2, 3, 4), (2, 4, 2)),
        "int32": _product(lambda tf, a, b: tf.matmul(a, b), (2, 2, 3), (2, 3, 2), dtype=np.int32),
        "float64": _product(lambda tf, a, b: tf.matmul(a, b), (2, 2, 3), (3, 2), dtype=np.float64),
        "python_operand": _product(lambda tf, a: tf.matmul(a, [[1.0, 2.0], [3.0, 4.0]]), (2, 3, 2)),
        "named": _product(lambda tf, a, b: tf.matmul(a, b, name="scores"), (2, 3, 4), (2, 4, 5)),
        "linalg_namespace": _product(
            lambda tf, a, b: tf.linalg.matmul(a, b, transpose_b=True), (2, 3, 4), (2, 5, 4)
        ),
    },
)


@program
def linalg_bmm_placeholders(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 4, 2], name="y")
    z = tf.matmul(x, y)
    feed = {x: np.arange(24.0).reshape(2, 3, 4), y: np.arange(16.0).reshape(2, 4, 2)}
    return Run(z, feed)


@program
def linalg_bmm_unknown_rank(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, name="x")
    z = tf.matmul(x, _c(tf, (4, 2), "b"))
    return Run(z, {x: np.arange(8.0).reshape(2, 4)})


@program(cpus=2)
def linalg_bmm_pinned_cpu1(tf: Any) -> Any:
    a, b = _c(tf, (2, 3, 4), "a"), _c(tf, (2, 4, 5), "b")
    with tf.device("/cpu:1"):
        z = tf.matmul(a, b, transpose_b=False, name="pinned")
    return tf.reduce_sum(z)


# -- BatchMatMulV2: gradients ------------------------------------------------------------------
family(
    "linalg_bmm_grad",
    {
        "same_batch": _grad(lambda tf, a, b: tf.matmul(a, b), (2, 3, 4), (2, 4, 5)),
        "broadcast": _grad(lambda tf, a, b: tf.matmul(a, b), (2, 3, 4), (4, 5)),
        "broadcast_both": _grad(lambda tf, a, b: tf.matmul(a, b), (1, 2, 3, 4), (3, 1, 4, 2)),
        "adjoint_a": _grad(lambda tf, a, b: tf.matmul(a, b, adjoint_a=True), (2, 4, 3), (2, 4, 5)),
        "adjoint_b": _grad(lambda tf, a, b: tf.matmul(a, b, adjoint_b=True), (2, 3, 4), (2, 5, 4)),
        "transpose_both": _grad(
            lambda tf, a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
            (2, 4, 3),
            (1, 5, 4),
        ),
    },
)


# -- Einsum ------------------------------------------------------------------------------------
def _einsum(equation: str, *shapes: tuple[int, ...]) -> Any:
    return _product(lambda tf, *xs: tf.einsum(equation, *xs), *shapes)


family(
    "linalg_einsum",
    {
        "batch_matmul": _einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
        "attention_scores": _einsum("bhqd,bhkd->bhqk", (1, 2, 3, 4), (1, 2, 5, 4)),
        "attention_values": _einsum("bhqk,bhkd->bhqd", (1, 2, 3, 5), (1, 2, 5, 4)),
        "projection": _einsum("abc,cd->abd", (2, 3, 4), (4, 5)),
        "matmul_implicit": _einsum("ij,jk", (2, 3), (3, 4)),
        "transpose": _einsum("ij->ji", (2, 3)),
        "diagonal": _einsum("ii->i", (3, 3)),
        "row_sums": _einsum("ij->i", (2, 3)),
        "dot": _einsum("i,i->", (4,), (4,)),
        "outer": _einsum("i,j->ij", (2,), (3,)),
        "ellipsis": _einsum("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
        "spaces": _einsum("ij, jk -> ik", (2, 3), (3, 4)),
        "int32": _product(
            lambda tf, a, b: tf.einsum("ij,jk->ik", a, b), (2, 3), (3, 2), dtype=np.int32
        ),
    },
)

family(
    "linalg_einsum_grad",
    {
        "batch_matmul": _grad(
            lambda tf, a, b: tf.einsum("bij,bjk->bik", a, b), (2, 3, 4), (2, 4, 5)
        ),
        "attention": _grad(
            lambda tf, a, b: tf.einsum("bhqd,bhkd->bhqk", a, b), (1, 2, 3, 4), (1, 2, 5, 4)
        ),
        "reduced_label": _grad(lambda tf, a, b: tf.einsum("abc,cd->ad", a, b), (2, 3, 4), (4, 5)),
        "row_sums": _grad(lambda tf, a: tf.einsum("ij->i", a), (2, 3)),
        "reduce_transpose": _grad(lambda tf, a: tf.einsum("ijk->ki", a), (2, 3, 4)),
        "diagonal": _grad(lambda tf, a: tf.einsum("ii->i", a), (3, 3)),
        "batched_diagonal": _grad(lambda tf, a: tf.einsum("...ii->...i", a), (2, 3, 3)),
        "trace_contraction": _grad(lambda tf, a, b: tf.einsum("ii,ij->j", a, b), (3, 3), (3, 2)),
        "ellipsis_broadcast": _grad(
            lambda tf, a, b: tf.einsum("...ij,...jk->...ik", a, b), (2, 3, 4), (4, 5)
        ),
    },
)


# -- tensordot ---------------------------------------------------------------------------------
family(
    "linalg_tensordot",
    {
        "last_axis": _product(lambda tf, a, b: tf.tensordot(a, b, 1), (2, 3, 4), (4, 5)),
        "two_axes": _product(
            lambda tf, a, b: tf.tensordot(a, b, [[1, 2], [0, 1]]), (2, 3, 4), (3, 4, 5)
        ),
        "transposed": _product(lambda tf, a, b: tf.tensordot(a, b, [[0], [1]]), (3, 2), (4, 3)),
        "outer": _product(lambda tf, a, b: tf.tensordot(a, b, 0), (2, 3), (4,)),
        "negative_axes": _product(lambda tf, a, b: tf.tensordot(a, b, [[-1], [0]]), (2, 3), (3, 2)),
        "grad": _grad(lambda tf, a, b: tf.tensordot(a, b, [[0, 2], [1, 0]]), (2, 3, 4), (4, 2, 5)),
    },
)


@program
def linalg_tensordot_partial_shape(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    z = tf.tensordot(x, _c(tf, (4, 2), "b"), [[2], [0]])
    return Run(z, {x: np.arange(24.0).reshape(2, 3, 4)})


# -- tf.layers.dense on rank-3 inputs ----------------------------------------------------------
@program
def linalg_dense_rank3(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    y = tf.layers.dense(x, 5, activation=tf.nn.relu, kernel_initializer=tf.ones_initializer())
    init = tf.global_variables_initializer()
    return Runs(Run(init), Run(y, {x: np.arange(24.0).reshape(2, 3, 4) / 10 - 1}))


@program
def linalg_dense_rank3_grad(tf: Any) -> Any:
    x = _c(tf, (2, 3, 4), "x")
    layer = tf.layers.Dense(5, kernel_initializer=tf.ones_initializer(), name="proj")
    y = layer(x)
    grads = tf.gradients(tf.reduce_sum(y * y), [x, *layer.trainable_variables])
    return Runs(Run(tf.global_variables_initializer()), Run(grads))


@program
def linalg_dense_rank4_no_bias(tf: Any) -> Any:
    x = _c(tf, (2, 1, 3, 4), "x")
    y = tf.layers.dense(x, 2, use_bias=False, kernel_initializer=tf.ones_initializer())
    return Runs(Run(tf.global_variables_initializer()), Run(y))


# -- errors ------------------------------------------------------------------------------------
@program(error=["Dimensions must be equal", "4 and 5"])
def linalg_error_inner_dims(tf: Any) -> Any:
    return tf.matmul(_c(tf, (2, 3, 4)), _c(tf, (2, 5, 6)))


@program(error=["Dimensions must be equal", "2 and 3"])
def linalg_error_batch_dims(tf: Any) -> Any:
    return tf.matmul(_c(tf, (2, 3, 4)), _c(tf, (3, 4, 5)))


@program(error=["Shape must be at least rank 2 but is rank 1"])
def linalg_error_rank1(tf: Any) -> Any:
    return tf.matmul(_c(tf, (4,)), _c(tf, (2, 4, 5)))


@program(error=["int32", "float32"])
def linalg_error_dtype_mismatch(tf: Any) -> Any:
    return tf.matmul(_c(tf, (2, 3, 4)), _c(tf, (2, 4, 5), dtype=np.int32))


@program(error=["Only one of `transpose_a` and `adjoint_a` can be True"])
def linalg_error_transpose_and_adjoint(tf: Any) -> Any:
    return tf.matmul(_c(tf, (2, 3, 4)), _c(tf, (2, 4, 5)), transpose_a=True, adjoint_a=True)


@program(error=["Subscripts have incorrect format"])
def linalg_error_einsum_bad_equation(tf: Any) -> Any:
    return tf.einsum("i1,jk->ik", _c(tf, (2, 3)), _c(tf, (3, 4)))


@program(error=["Output subscripts contain the label l not present in the input subscripts"])
def linalg_error_einsum_unknown_output_label(tf: Any) -> Any:
    return tf.einsum("ij,jk->ikl", _c(tf, (2, 3)), _c(tf, (3, 4)))


@program(error=["Got 1 inputs for equation", "expecting 2"])
def linalg_error_einsum_operand_count(tf: Any) -> Any:
    return tf.einsum("ij,jk", _c(tf, (2, 3)))


@program(error=["Dimensions must be equal, but are 3 and 4"])
def linalg_error_einsum_dims(tf: Any) -> Any:
    return tf.einsum("ij,jk->ik", _c(tf, (2, 3)), _c(tf, (4, 4)))


@program(error=["Shape must be rank 3 but is rank 2"])
def linalg_error_einsum_rank(tf: Any) -> Any:
    return tf.einsum("ijk,jk->ik", _c(tf, (2, 3)), _c(tf, (3, 4)))


@program(error=["Different number of contraction axes"])
def linalg_error_tensordot_axes(tf: Any) -> Any:
    return tf.tensordot(_c(tf, (2, 3)), _c(tf, (3, 5)), [[1], [0, 1]])


# -- gradients of operands whose shapes are partly known ---------------------------------------
def _partial_grad(
    fn: Any, *shapes: tuple[int | None, ...], values: tuple[tuple[int, ...], ...]
) -> Any:
    """Gradients of ``sum(fn(tf, *placeholders)²)``, fed operands shaped ``values``."""

    def build(tf: Any) -> Any:
        xs = [tf.placeholder(tf.float32, s, name=n) for s, n in zip(shapes, "ab")]
        y = fn(tf, *xs)
        grads = tf.gradients(tf.reduce_sum(y * y), xs)
        feed = {x: np.arange(np.prod(v)).reshape(v) / 10 for x, v in zip(xs, values)}
        return Run(grads, feed)

    return build


family(
    "linalg_partial_grad",
    {
        "bmm": _partial_grad(
            lambda tf, a, b: tf.matmul(a, b, adjoint_b=True),
            (None, 3, 4),
            (None, 5, 4),
            values=((2, 3, 4), (1, 5, 4)),
        ),
        "einsum_reduced_label": _partial_grad(
            lambda tf, a, b: tf.einsum("abc,cd->ad", a, b),
            (None, 3, 4),
            (4, 5),
            values=((2, 3, 4), (4, 5)),
        ),
        "einsum_ellipsis": _partial_grad(
            lambda tf, a, b: tf.einsum("...ij,...jk->...ik", a, b),
            (None, 3, 4),
            (4, 5),
            values=((2, 3, 4), (4, 5)),
        ),
        "tensordot": _partial_grad(
            lambda tf, a, b: tf.tensordot(a, b, [[0, 2], [1, 0]]),
            (2, None, 4),
            (4, 2, 5),
            values=((2, 3, 4), (4, 2, 5)),
        ),
    },
)


@program
def linalg_dense_rank3_partial_grad(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
    y = tf.layers.dense(x, 5, kernel_initializer=tf.ones_initializer())
    grads = tf.gradients(tf.reduce_sum(y * y), [x, *tf.trainable_variables()])
    feed = {x: np.arange(24.0).reshape(2, 3, 4) / 10}
    return Runs(Run(tf.global_variables_initializer()), Run(grads, feed))


# -- matmul's other arguments ------------------------------------------------------------------
family(
    "linalg_matmul_args",
    {
        "a_is_sparse": _grad(lambda tf, a, b: tf.matmul(a, b, a_is_sparse=True), (2, 3), (3, 4)),
        "b_is_sparse_transposed": _grad(
            lambda tf, a, b: tf.matmul(a, b, b_is_sparse=True, transpose_b=True), (2, 3), (4, 3)
        ),
        "sparse_relu": _grad(
            lambda tf, a, b: tf.nn.relu(
                tf.matmul(tf.nn.relu(a - 0.3), b, a_is_sparse=True, transpose_a=True)
            ),
            (3, 2),
            (3, 4),
        ),
        "sparse_int32_is_a_matmul": _product(
            lambda tf, a, b: tf.matmul(a, b, a_is_sparse=True), (2, 3), (3, 2), dtype=np.int32
        ),
        "output_type_same": _product(
            lambda tf, a, b: tf.matmul(a, b, output_type=tf.float32), (2, 3), (3, 2)
        ),
        "adjoint_rank2": _grad(
            lambda tf, a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True), (3, 2), (4, 3)
        ),
    },
)


@program(error=["Shape must be rank 2 but is rank 3"])
def linalg_error_sparse_rank3(tf: Any) -> Any:
    return tf.matmul(_c(tf, (2, 2, 3)), _c(tf, (3, 4)), b_is_sparse=True)


@program
def linalg_einsum_numpy_operands(tf: Any) -> Any:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    return tf.einsum("ij,jk->ik", a, np.ones((3, 2), np.float32), name="proj")


@program
def linalg_attention_block(tf: Any) -> Any:
    """Multi-head self-attention as BERT builds it: dense projections of a rank-3 input, split
    into heads, batched q·kᵀ and probs·v products, and the gradients of every weight."""
    x = tf.placeholder(tf.float32, [2, 5, 8], name="x")
    init = tf.constant_initializer(np.arange(64).reshape(8, 8) / 640)

    def heads(t: Any) -> Any:
        return tf.transpose(tf.reshape(t, [2, 5, 2, 4]), [0, 2, 1, 3])

    q = heads(tf.layers.dense(x, 8, name="query", kernel_initializer=init))
    k = heads(tf.layers.dense(x, 8, name="key", kernel_initializer=init))
    v = heads(tf.layers.dense(x, 8, name="value", kernel_initializer=init))
    probs = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) * 0.5)
    context = tf.reshape(tf.transpose(tf.matmul(probs, v), [0, 2, 1, 3]), [2, 5, 8])
    out = tf.layers.dense(context, 8, name="output", kernel_initializer=init)
    grads = tf.gradients(tf.reduce_mean(out * out), tf.trainable_variables())
    feed = {x: np.arange(80).reshape(2, 5, 8) / 80}
    return Runs(Run(tf.global_variables_initializer()), Run([out, grads], feed))
