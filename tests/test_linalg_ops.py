"""Rank-N linear algebra: BatchMatMulV2 (matmul of rank > 2), Einsum, tensordot and Dense on
rank-3 inputs, against NumPy's matmul, einsum and tensordot, and their gradients against
central differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_gradients import MODES, check_gradients

import placeviz as pv
from placeviz.graph import registry
from placeviz.graph.ops import linalg_ops


def _grid(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    """Distinct values (0.1 apart, centred on zero), so every product and sum is exercised."""
    count = int(np.prod(shape))
    return ((np.arange(count) - count / 2) / 10).reshape(shape).astype(dtype)


def _run(fetch: Any, feed: dict | None = None) -> Any:
    with pv.Session() as sess:
        return sess.run(fetch, feed)


def _adjoint(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


# -- BatchMatMulV2 -----------------------------------------------------------------------------
BROADCASTS = [
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((1, 3, 2, 4), (2, 1, 4, 3)),
    ((2, 1, 3, 4), (5, 4, 2)),
]


@pytest.mark.parametrize(("x_shape", "y_shape"), BROADCASTS)
def test_batch_matmul_broadcasts_batch_dimensions_as_numpy(x_shape: tuple, y_shape: tuple) -> None:
    x, y = _grid(*x_shape), _grid(*y_shape)
    z = pv.matmul(pv.constant(x), pv.constant(y))
    assert z.op.type == "BatchMatMulV2" and z.op.name == "MatMul"
    assert z.shape.as_list() == list(np.matmul(x, y).shape)
    np.testing.assert_allclose(_run(z), np.matmul(x, y))


@pytest.mark.parametrize("flag", ["transpose", "adjoint"])
@pytest.mark.parametrize(("on_a", "on_b"), [(True, False), (False, True), (True, True)])
def test_transposes_and_adjoints_swap_the_last_two_axes(flag: str, on_a: bool, on_b: bool) -> None:
    x = _grid(2, 4, 3) if on_a else _grid(2, 3, 4)
    y = _grid(2, 5, 4) if on_b else _grid(2, 4, 5)
    z = pv.matmul(pv.constant(x), pv.constant(y), **{f"{flag}_a": on_a, f"{flag}_b": on_b})
    assert z.op.attrs["adj_x"] is on_a and z.op.attrs["adj_y"] is on_b
    expected = np.matmul(_adjoint(x) if on_a else x, _adjoint(y) if on_b else y)
    np.testing.assert_allclose(_run(z), expected)


def test_integer_batch_matmul_stays_integer() -> None:
    x, y = _grid(2, 2, 3, dtype=np.int32), _grid(3, 2, dtype=np.int32)
    z = pv.matmul(x, y)
    assert z.dtype == pv.int32
    np.testing.assert_array_equal(_run(z), np.matmul(x, y))


def test_rank_two_operands_stay_a_matmul_and_unknown_ranks_batch() -> None:
    assert pv.matmul(_grid(2, 3), _grid(3, 2)).op.type == "MatMul"
    unknown = pv.placeholder(pv.float64)
    z = pv.matmul(unknown, _grid(3, 2))
    assert z.op.type == "BatchMatMulV2" and z.shape.ndims is None
    value = _grid(4, 2, 3)
    np.testing.assert_allclose(_run(z, {unknown: value}), np.matmul(value, _grid(3, 2)))


def test_partly_known_shapes_keep_what_is_known() -> None:
    x = pv.placeholder(pv.float32, [None, None, 4])
    y = pv.placeholder(pv.float32, [None, 4, 2])
    assert pv.matmul(x, y).shape.as_list() == [None, None, 2]


def test_cost_counts_two_flops_per_multiply_add() -> None:
    z = pv.matmul(pv.constant(_grid(2, 3, 4)), pv.constant(_grid(4, 5)), adjoint_a=False)
    cost = z.op.op_def.cost(z.op, [(2, 3, 4), (4, 5)], [(2, 3, 5)])
    assert cost.flops == 2 * 2 * 3 * 5 * 4
    assert cost.bytes == (24 + 20 + 30) * 8


def test_gpus_have_float_kernels_only() -> None:
    op_def = registry.get("BatchMatMulV2")
    assert op_def.supports("GPU", pv.float32) and not op_def.supports("GPU", pv.int32)
    assert op_def.supports("CPU", pv.int32)


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "words"),
    [
        ((2, 3, 4), (2, 5, 6), "Dimensions must be equal, but are 4 and 5"),
        ((2, 3, 4), (3, 4, 5), "Dimensions must be equal, but are 2 and 3"),
        ((4,), (2, 4, 5), "Shape must be at least rank 2 but is rank 1"),
    ],
)
def test_shape_errors_are_value_errors(x_shape: tuple, y_shape: tuple, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pv.matmul(pv.constant(_grid(*x_shape)), pv.constant(_grid(*y_shape)))


def test_dtype_errors_are_type_errors() -> None:
    with pytest.raises(TypeError, match="int32 that does not match type float64"):
        pv.matmul(pv.constant(_grid(2, 3, 4)), pv.constant(_grid(2, 4, 5, dtype=np.int32)))
    with pytest.raises(ValueError, match="Only one of `transpose_b` and `adjoint_b`"):
        pv.matmul(_grid(2, 3, 4), _grid(4, 5), transpose_b=True, adjoint_b=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("x_shape", "y_shape"), BROADCASTS[:4])
def test_batch_matmul_gradients(mode: str, x_shape: tuple, y_shape: tuple) -> None:
    check_gradients(pv.matmul, [_grid(*x_shape), _grid(*y_shape)], mode)


@pytest.mark.parametrize(("adjoint_a", "adjoint_b"), [(True, False), (False, True), (True, True)])
def test_adjoint_gradients(adjoint_a: bool, adjoint_b: bool) -> None:
    x = _grid(2, 4, 3) if adjoint_a else _grid(2, 3, 4)
    y = _grid(1, 5, 4) if adjoint_b else _grid(1, 4, 5)
    check_gradients(lambda a, b: pv.matmul(a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b), [x, y])


@pytest.mark.parametrize(
    ("transpose_a", "transpose_b"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_sparse_hints_make_a_sparse_matmul_of_float32_matrices(
    transpose_a: bool, transpose_b: bool
) -> None:
    """d sum(w * (A @ B)) is w @ Bᵀ for A and Aᵀ @ w for B, read back through the transposes."""
    a, b, w = _grid(2, 3, dtype=np.float32), _grid(3, 4, dtype=np.float32), _grid(2, 4) + 1
    ta, tb = pv.constant(a.T if transpose_a else a), pv.constant(b.T if transpose_b else b)
    z = pv.matmul(ta, tb, transpose_a=transpose_a, transpose_b=transpose_b, a_is_sparse=True)
    assert z.op.type == "SparseMatMul" and z.op.name == "MatMul"
    ga, gb = pv.gradients(pv.reduce_sum(z * w.astype(np.float32)), [ta, tb])
    value, ga, gb = _run([z, ga, gb])
    np.testing.assert_allclose(value, a @ b, rtol=1e-6)
    expected_a, expected_b = w @ b.T, a.T @ w
    np.testing.assert_allclose(ga, expected_a.T if transpose_a else expected_a, rtol=1e-5)
    np.testing.assert_allclose(gb, expected_b.T if transpose_b else expected_b, rtol=1e-5)


@pytest.mark.parametrize("rows", [1, 16, 65])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_matmul_by_a_transposed_b_of_few_or_many_rows(rows: int, dtype: Any) -> None:
    """A few rows of ``a`` are multiplied as the transpose of ``b @ a.T`` (faster in OpenBLAS),
    many as ``a @ b.T``: both are NumPy's ``a @ b.T``, C-ordered."""
    a, b = _grid(rows, 7, dtype=dtype), _grid(5, 7, dtype=dtype)
    value = _run(pv.matmul(pv.constant(a), pv.constant(b), transpose_b=True))
    assert value.dtype == dtype and value.flags.c_contiguous
    np.testing.assert_allclose(value, a @ b.T, rtol=1e-6)


def test_sparse_hints_on_other_dtypes_and_ranks_follow_tensorflow() -> None:
    assert pv.matmul(_grid(2, 3), _grid(3, 2), b_is_sparse=True).op.type == "MatMul"
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 3"):
        pv.matmul(_grid(2, 2, 3, dtype=np.float32), _grid(3, 4, dtype=np.float32), b_is_sparse=True)
    assert pv.matmul(_grid(2, 3), _grid(3, 2), output_type=pv.float64).op.type == "MatMul"
    with pytest.raises(NotImplementedError, match="BatchMatMulV3"):
        pv.matmul(_grid(2, 3), _grid(3, 2), output_type=pv.float32)


# -- Einsum ------------------------------------------------------------------------------------
EQUATIONS = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("bhqk,bhkd->bhqd", [(1, 2, 3, 5), (1, 2, 5, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("abc,cd->ad", [(2, 3, 4), (4, 5)]),
    ("ij, jk", [(2, 3), (3, 4)]),
    ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 5)]),
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ii,ij->j", [(3, 3), (3, 2)]),
    ("ij->i", [(2, 3)]),
    ("ijk->ki", [(2, 3, 4)]),
    ("ij->", [(2, 3)]),
]


@pytest.mark.parametrize(("equation", "shapes"), EQUATIONS)
def test_einsum_matches_numpy(equation: str, shapes: list) -> None:
    operands = [_grid(*s) for s in shapes]
    z = pv.einsum(equation, *operands)
    assert z.op.type == "Einsum" and z.op.name == "einsum/Einsum"
    expected = np.einsum(equation.replace(" ", ""), *operands)
    assert z.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(z), expected)


@pytest.mark.parametrize(("equation", "shapes"), EQUATIONS)
def test_einsum_gradients(equation: str, shapes: list) -> None:
    operands = [_grid(*s) for s in shapes]
    check_gradients(lambda *xs: pv.einsum(equation, *xs), operands)


@pytest.mark.parametrize("mode", ["dims", "unknown"])
def test_einsum_gradients_with_shapes_known_at_run_time(mode: str) -> None:
    check_gradients(lambda a, b: pv.einsum("abc,cd->ad", a, b), [_grid(2, 3, 4), _grid(4, 5)], mode)
    check_gradients(lambda a: pv.einsum("ij->j", a), [_grid(2, 3)], mode)


def test_an_output_that_repeats_a_label_fills_the_diagonal() -> None:
    values = _grid(2, 3)
    z = linalg_ops.einsum_op([pv.constant(values[0])], "i->ii")
    batched = linalg_ops.einsum_op([pv.constant(values)], "...i->...ii")
    assert batched.shape.as_list() == [2, 3, 3]
    np.testing.assert_array_equal(_run(z), np.diag(values[0]))
    np.testing.assert_array_equal(_run(batched), [np.diag(row) for row in values])


def test_einsum_cost_counts_a_multiply_add_per_contracted_term() -> None:
    z = pv.einsum("bij,bjk->bik", _grid(2, 3, 4), _grid(2, 4, 5))
    cost = z.op.op_def.cost(z.op, [(2, 3, 4), (2, 4, 5)], [(2, 3, 5)])
    assert cost.flops == 2 * (2 * 3 * 5) * 4
    assert cost.bytes == (24 + 40 + 30) * 8


def test_einsum_ellipsis_shapes_broadcast() -> None:
    x = pv.placeholder(pv.float32, [None, 1, 3, 4])
    y = pv.placeholder(pv.float32, [5, 4, 2])
    assert pv.einsum("...ij,...jk->...ik", x, y).shape.as_list() == [None, 5, 3, 2]


@pytest.mark.parametrize(
    ("equation", "shapes", "words"),
    [
        ("i1,jk->ik", [(2, 3), (3, 4)], "Subscripts have incorrect format: i1,jk->ik"),
        ("ij,jk->ikl", [(2, 3), (3, 4)], "label l not present in the input subscripts"),
        ("ij,jk->ii", [(2, 3), (3, 4)], "label appearing more than once"),
        ("ij,jk", [(2, 3)], 'Got 1 inputs for equation "ij,jk", expecting 2'),
        ("ij,jk->ik", [(2, 3), (4, 4)], "Dimensions must be equal, but are 3 and 4"),
        ("ijk,jk->ik", [(2, 3), (3, 4)], "Shape must be rank 3 but is rank 2"),
    ],
)
def test_einsum_errors_are_value_errors(equation: str, shapes: list, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pv.einsum(equation, *(pv.constant(_grid(*s)) for s in shapes))


def test_einsum_operands_must_share_a_dtype() -> None:
    with pytest.raises(TypeError, match=r"have types \[float64, int32\] that don't all match"):
        pv.einsum("ij,jk->ik", pv.constant(_grid(2, 3)), pv.constant(_grid(3, 2, dtype=np.int32)))


# -- tensordot ---------------------------------------------------------------------------------
AXES = [
    (1, (2, 3, 4), (4, 5)),
    (2, (2, 3, 4), (3, 4, 5)),
    (0, (2, 3), (4,)),
    ([[0], [1]], (3, 2), (4, 3)),
    ([[0, 2], [1, 0]], (2, 3, 4), (4, 2, 5)),
    ([[-1], [0]], (2, 3), (3, 2)),
]


@pytest.mark.parametrize(("axes", "x_shape", "y_shape"), AXES)
def test_tensordot_matches_numpy(axes: Any, x_shape: tuple, y_shape: tuple) -> None:
    x, y = _grid(*x_shape), _grid(*y_shape)
    z = pv.tensordot(x, y, axes)
    expected = np.tensordot(x, y, axes)
    assert z.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(z), expected)
    check_gradients(lambda a, b: pv.tensordot(a, b, axes), [x, y])


def test_tensordot_of_a_partly_known_shape_reads_it_at_run_time() -> None:
    x = pv.placeholder(pv.float64, [None, 3, 4])
    z = pv.tensordot(x, _grid(4, 2), [[2], [0]])
    assert z.op.name == "Tensordot" and z.shape.as_list() == [None, 3, 2]
    value = _grid(5, 3, 4)
    np.testing.assert_allclose(_run(z, {x: value}), np.tensordot(value, _grid(4, 2), 1))
    check_gradients(lambda a: pv.tensordot(a, _grid(4, 2), [[2], [0]]), [value], "dims")


@pytest.mark.parametrize(
    ("axes", "words"),
    [
        (-1, "`axes` must be at least 0"),
        (3, "`axes` must not be larger than the number of dimensions"),
        ([[1], [0, 1]], "Different number of contraction axes `a` and `b`, 1 != 2"),
        ([1, 0, 1], "`axes` must be an integer or have length 2"),
    ],
)
def test_tensordot_axes_errors(axes: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pv.tensordot(_grid(2, 3), _grid(3, 2), axes)


# -- Dense on rank-3 inputs --------------------------------------------------------------------
def test_dense_contracts_the_last_axis_of_a_rank3_input() -> None:
    x = pv.placeholder(pv.float32, [None, 3, 4])
    layer = pv.layers.Dense(2, kernel_initializer=pv.ones_initializer(), bias_initializer="ones")
    y = layer(x)
    assert y.shape.as_list() == [None, 3, 2] and y.op.type == "BiasAdd"
    assert y.op.inputs[0].op.name == "dense/Tensordot"
    value = _grid(2, 3, 4, dtype=np.float32)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        got = sess.run(y, {x: value})
    np.testing.assert_allclose(got, value @ np.ones((4, 2)) + 1, rtol=1e-6, atol=1e-6)


def test_dense_rank3_gradients() -> None:
    """d sum(w * y) for y = x @ K + b: w @ Kᵀ for x, the batch's xᵀ @ w for K, w summed for b."""
    x, kernel = _grid(2, 3, 4, dtype=np.float32), _grid(4, 2, dtype=np.float32)
    weights = _grid(2, 3, 2, dtype=np.float32) + 1
    layer = pv.layers.Dense(2, kernel_initializer=pv.constant_initializer(kernel))
    tx = pv.constant(x)
    y = layer(tx)
    grads = pv.gradients(pv.reduce_sum(y * weights), [tx, layer.kernel, layer.bias])
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        gx, gk, gb = sess.run(grads)
    np.testing.assert_allclose(gx, weights @ kernel.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gk, np.einsum("bti,bto->io", x, weights), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, weights.sum(axis=(0, 1)), rtol=1e-5)
