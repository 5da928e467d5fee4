"""pv.gradients: every differentiable op against central differences, broadcasting with shapes
known only at run time, TF's names, accumulation, Variables and colocation on simulated GPUs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.graph import grads
from placeviz.graph.ops import math_ops, shape_ops

LOCAL = "/job:localhost/replica:0/task:0/device:"
MODES = ("static", "dims", "unknown")  # placeholders with full, rank-only and no static shape
EPS = 1e-6


def _placeholder(value: np.ndarray, mode: str) -> pv.Tensor:
    shape = {"static": value.shape, "dims": [None] * value.ndim, "unknown": None}[mode]
    return pv.placeholder(pv.float64, shape)


def check_gradients(
    fn: Callable[..., Any],
    values: list[np.ndarray],
    mode: str = "static",
    rtol: float = 1e-5,
    atol: float = 1e-7,
) -> None:
    """Symbolic gradients of sum_i(w_i * y_i), random weights w_i, against central differences."""
    rng = np.random.default_rng(1)
    values = [np.asarray(v, dtype=np.float64) for v in values]
    xs = [_placeholder(v, mode) for v in values]
    out = fn(*xs)
    ys = list(out) if isinstance(out, list | tuple) else [out]
    with pv.Session() as sess:
        feed = dict(zip(xs, values))
        weights = [
            np.asarray(rng.standard_normal(np.shape(y)), np.float64) for y in sess.run(ys, feed)
        ]
        symbolic = pv.gradients(ys, xs, grad_ys=[pv.constant(w) for w in weights])
        assert all(g is not None for g in symbolic), symbolic
        got = sess.run(symbolic, feed)

        def objective(point: list[np.ndarray]) -> float:
            results = sess.run(ys, dict(zip(xs, point)))
            return float(sum(np.sum(w * r) for w, r in zip(weights, results)))

        for i, value in enumerate(values):
            numeric = np.zeros_like(value)
            for index in np.ndindex(value.shape):
                plus = [v.copy() for v in values]
                minus = [v.copy() for v in values]
                plus[i][index] += EPS
                minus[i][index] -= EPS
                numeric[index] = (objective(plus) - objective(minus)) / (2 * EPS)
            assert got[i].shape == value.shape
            np.testing.assert_allclose(got[i], numeric, rtol=rtol, atol=atol, err_msg=f"x{i}")


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return _rng().standard_normal(shape)


def positive(*shape: int) -> np.ndarray:
    return _rng().uniform(0.5, 2.0, shape)


def away_from_zero(*shape: int) -> np.ndarray:
    """No element within 0.2 of the kink of Abs or Relu."""
    rng = _rng()
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 1.0, shape)


def distinct(*shape: int) -> np.ndarray:
    """No two elements within 0.3 of each other, so Max and Min have no ties."""
    n = int(np.prod(shape))
    return (_rng().permutation(n) * 0.3 - 1.0).reshape(shape)


def grid(*shape: int, offset: float = 0.0) -> np.ndarray:
    """Multiples of 0.5 (plus offset): two grids with offsets 0 and 0.25 never tie."""
    return _rng().integers(-4, 5, shape) * 0.5 + offset


# -- every differentiable op against central differences ---------------------------------------
CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray]]] = {
    "AddV2": (lambda a, b: a + b, [normal(3, 1), normal(1, 4)]),
    "Sub": (lambda a, b: a - b, [normal(2, 3), normal(3)]),
    "Mul": (lambda a, b: a * b, [normal(3, 1), normal(1, 4)]),
    "RealDiv": (lambda a, b: a / b, [normal(2, 3), positive(2, 1)]),
    "Pow": (pv.pow, [positive(2, 3), normal(3)]),
    "Maximum": (pv.maximum, [grid(3, 1), grid(1, 4, offset=0.25)]),
    "Minimum": (pv.minimum, [grid(2, 3), grid(3, offset=0.25)]),
    "Neg": (pv.negative, [normal(2, 3)]),
    "Abs": (pv.abs, [away_from_zero(2, 3)]),
    "Square": (pv.square, [normal(2, 3)]),
    "Sqrt": (pv.sqrt, [positive(2, 3)]),
    "Exp": (pv.exp, [normal(2, 3)]),
    "Log": (pv.log, [positive(2, 3)]),
    "Reciprocal": (math_ops.reciprocal, [positive(4)]),
    "Tanh": (pv.tanh, [normal(2, 3)]),
    "Sigmoid": (pv.sigmoid, [normal(2, 3)]),
    "Relu": (pv.nn.relu, [away_from_zero(2, 3)]),
    "MatMul": (pv.matmul, [normal(2, 3), normal(3, 4)]),
    "MatMul_ta": (lambda a, b: pv.matmul(a, b, transpose_a=True), [normal(3, 2), normal(3, 4)]),
    "MatMul_tb": (lambda a, b: pv.matmul(a, b, transpose_b=True), [normal(2, 3), normal(4, 3)]),
    "MatMul_tab": (
        lambda a, b: pv.matmul(a, b, transpose_a=True, transpose_b=True),
        [normal(3, 2), normal(4, 3)],
    ),
    "AddN": (lambda a, b: pv.add_n([a, b, a]), [normal(2, 3), normal(2, 3)]),
    "Sum_all": (pv.reduce_sum, [normal(2, 3)]),
    "Sum_axis": (lambda a: pv.reduce_sum(a, axis=1), [normal(2, 3, 2)]),
    "Sum_neg_keepdims": (
        lambda a: pv.reduce_sum(a, axis=[0, -1], keepdims=True),
        [normal(2, 3, 2)],
    ),
    "Mean_all": (pv.reduce_mean, [normal(2, 3)]),
    "Mean_axis": (lambda a: pv.reduce_mean(a, axis=[-1]), [normal(2, 3)]),
    "Max": (lambda a: pv.reduce_max(a, axis=1), [distinct(2, 3)]),
    "Max_all": (pv.reduce_max, [distinct(2, 3)]),
    "Min_keepdims": (lambda a: pv.reduce_min(a, axis=0, keepdims=True), [distinct(3, 2)]),
    "Reshape": (lambda a: pv.reshape(a, [3, -1]), [normal(2, 6)]),
    "Transpose": (lambda a: pv.transpose(a, [1, 2, 0]), [normal(2, 3, 4)]),
    "Transpose_reverse": (pv.transpose, [normal(2, 3)]),
    "Squeeze": (lambda a: pv.squeeze(a, axis=[1]), [normal(2, 1, 3)]),
    "Squeeze_all": (pv.squeeze, [normal(2, 1, 3)]),
    "ExpandDims": (lambda a: pv.expand_dims(a, -1), [normal(2, 3)]),
    "Pack": (lambda a, b: pv.stack([a, b], axis=1), [normal(2, 3), normal(2, 3)]),
    "Unpack": (lambda a: pv.unstack(a, num=3, axis=1), [normal(2, 3)]),
    "Unpack_one_used": (lambda a: pv.unstack(a, num=3, axis=1)[1], [normal(2, 3)]),
    "ConcatV2": (lambda a, b: pv.concat([a, b], axis=1), [normal(2, 1), normal(2, 3)]),
    "ConcatV2_three": (
        lambda a, b, c: pv.concat([a, b, c], axis=-2),
        [normal(1, 2), normal(3, 2), normal(2, 2)],
    ),
    "Split": (lambda a: pv.split(a, 2, axis=1), [normal(2, 4)]),
    "Split_one_used": (lambda a: pv.split(a, 3, axis=0)[2], [normal(3, 2)]),
    "SplitV": (lambda a: pv.split(a, [1, -1, 2], axis=1), [normal(2, 6)]),
    "Slice": (lambda a: pv.slice(a, [1, 0], [2, -1]), [normal(4, 3)]),
    "Slice_tensor_bounds": (
        lambda a: pv.slice(a, pv.constant([0, 1]), pv.constant([-1, 2])),
        [normal(3, 4)],
    ),
    "Tile": (lambda a: pv.tile(a, [2, 1, 3]), [normal(2, 3, 1)]),
    "GatherV2": (lambda a: pv.gather(a, [2, 0, 2]), [normal(3, 2)]),
    "GatherV2_axis1": (lambda a: pv.gather(a, [[1, 1], [0, 2]], axis=1), [normal(2, 3, 2)]),
    "Identity": (lambda a: pv.identity(a) * a, [normal(2, 3)]),
    "Softmax": (pv.nn.softmax, [normal(2, 4)]),
    "Softmax_axis0": (lambda a: pv.nn.softmax(a, axis=0), [normal(3, 2)]),
    "BroadcastTo": (
        lambda a: shape_ops.broadcast_to(a, pv.constant([2, 3, 2])),
        [normal(3, 1)],
    ),
}
# GatherV2 along axis 1 moves the gathered dimensions with transposes, which need the ranks.
STATIC_RANK_ONLY = {"GatherV2_axis1"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_central_differences(case: str, mode: str) -> None:
    if mode == "unknown" and case in STATIC_RANK_ONLY:
        pytest.skip("needs the static rank")
    fn, values = CASES[case]
    check_gradients(fn, values, mode)


def test_every_listed_op_type_is_differentiable_or_declared_not() -> None:
    registered = grads.registered_types()
    differentiable = [
        *("AddV2", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "Neg", "Abs"),
        *("Square", "Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "MatMul", "AddN"),
        *("Sum", "Mean", "Max", "Min", "Reshape", "Transpose", "Squeeze", "ExpandDims"),
        *("Pack", "Unpack", "ConcatV2", "Split", "SplitV", "Slice", "GatherV2", "Cast"),
        "Tile",
        *("Identity", "Softmax"),
    ]
    not_differentiable = [
        *("Const", "Placeholder", "ZerosLike", "Fill", "RandomUniform"),
        *("RandomStandardNormal", "Assign", "AssignAdd", "NoOp", "VariableV2", "Shape", "Size"),
        "BroadcastGradientArgs",
    ]
    assert all(registered[t] for t in differentiable)
    assert not any(registered[t] for t in not_differentiable)


# -- broadcasting, with shapes known statically or only at run time ----------------------------
@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    out = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))

    def operand() -> list[int]:
        rank = draw(st.integers(0, len(out)))
        return [draw(st.sampled_from([1, d])) for d in out[len(out) - rank :]]

    return operand(), operand()


@settings(max_examples=25, deadline=None)
@given(
    shapes=broadcast_pair(),
    op=st.sampled_from(["add", "sub", "mul", "div", "pow", "maximum"]),
    mode=st.sampled_from(MODES),
)
def test_broadcast_gradients_reduce_to_each_operand(
    shapes: tuple[list[int], list[int]], op: str, mode: str
) -> None:
    pv.reset_default_graph()
    a_shape, b_shape = shapes
    fns = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "pow": pv.pow,
        "maximum": pv.maximum,
    }
    if op == "maximum":
        values = [grid(*a_shape), grid(*b_shape, offset=0.25)]
    else:
        values = [positive(*a_shape), positive(*b_shape)]
    check_gradients(fns[op], values, mode)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    data=st.data(),
    op=st.sampled_from([pv.reduce_sum, pv.reduce_mean, pv.reduce_max, pv.reduce_min]),
    keepdims=st.booleans(),
    mode=st.sampled_from(MODES),
)
def test_reduction_gradients(
    shape: list[int], data: st.DataObject, op: Any, keepdims: bool, mode: str
) -> None:
    pv.reset_default_graph()
    rank = len(shape)
    axes = data.draw(
        # distinct dimensions (1 and -2 may name one twice, which TF's kernel rejects)
        st.none()
        | st.lists(
            st.integers(-rank, rank - 1),
            min_size=1,
            max_size=rank,
            unique_by=lambda a: a % rank,
        )
    )
    check_gradients(lambda x: op(x, axis=axes, keepdims=keepdims), [distinct(*shape)], mode)


def test_scalar_times_unknown_length_vector_sums_over_the_run_time_length() -> None:
    """Seed program 004: w * x + b with x a placeholder of shape [None]."""
    w = pv.Variable(0.5, name="weight")
    b = pv.Variable(0.25, name="bias")
    x = pv.placeholder(pv.float32, shape=[None])
    out = pv.placeholder(pv.float32, shape=[None])
    loss = pv.reduce_mean(pv.square(w * x + b - out))
    gw, gb = pv.gradients(loss, [w, b])
    assert gw.shape == [] and gb.shape == []
    types = {op.type for op in pv.get_default_graph().get_operations()}
    assert {"Shape", "BroadcastGradientArgs"} <= types
    xv = np.array([1, 23, 4, 5, 7, 5, 7], np.float32)
    ov = np.array([3, 5, 7, 9, 11, 13, 15], np.float32)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        for n in (7, 3):  # the same graph, fed two different lengths
            gw_val, gb_val = sess.run([gw, gb], {x: xv[:n], out: ov[:n]})
            residual = 0.5 * xv[:n] + 0.25 - ov[:n]
            np.testing.assert_allclose(gw_val, np.mean(2 * residual * xv[:n]), rtol=1e-5)
            np.testing.assert_allclose(gb_val, np.mean(2 * residual), rtol=1e-5)


def test_unknown_rank_placeholders_broadcast_at_run_time() -> None:
    a = pv.placeholder(pv.float64)
    b = pv.placeholder(pv.float64)
    ga, gb = pv.gradients(a * b, [a, b])
    assert ga.shape.ndims is None
    av, bv = np.arange(3.0).reshape(3, 1), np.arange(4.0).reshape(1, 4)
    with pv.Session() as sess:
        ga_val, gb_val = sess.run([ga, gb], {a: av, b: bv})
        np.testing.assert_allclose(ga_val, np.full((3, 1), bv.sum()))
        np.testing.assert_allclose(gb_val, np.full((1, 4), av.sum()))
        ga_val, gb_val = sess.run([ga, gb], {a: 2.0, b: np.ones((2, 2))})
        assert np.shape(ga_val) == () and ga_val == 4.0
        np.testing.assert_allclose(gb_val, np.full((2, 2), 2.0))


def test_static_shapes_need_no_shape_ops() -> None:
    a = pv.constant(np.ones((3, 1)))
    b = pv.constant(np.ones((1, 4)))
    ga, gb = pv.gradients(a * b, [a, b])
    assert ga.shape == [3, 1] and gb.shape == [1, 4]
    types = {op.type for op in pv.get_default_graph().get_operations()}
    assert not {"Shape", "BroadcastGradientArgs"} & types
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(ga), np.full((3, 1), 4.0))


# -- exact values where finite differences cannot look ------------------------------------------
def test_max_shares_the_gradient_between_ties() -> None:
    x = pv.constant([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    (g,) = pv.gradients(pv.reduce_max(x, axis=1), [x])
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(g), [[0, 0.5, 0.5], [1, 0, 0]])


def test_maximum_gives_ties_to_x() -> None:
    x, y = pv.constant([1.0, 2.0]), pv.constant([1.0, 3.0])
    gx, gy = pv.gradients(pv.maximum(x, y), [x, y])
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run([gx, gy]), [[1, 0], [0, 1]])


def test_pow_gradient_at_zero_base_is_finite() -> None:
    x, y = pv.constant([0.0, 2.0]), pv.constant([2.0, 3.0])
    gx, gy = pv.gradients(pv.pow(x, y), [x, y])
    with pv.Session() as sess:
        gx_val, gy_val = sess.run([gx, gy])
    np.testing.assert_allclose(gx_val, [0.0, 12.0])
    np.testing.assert_allclose(gy_val, [0.0, 8.0 * np.log(2.0)])


def test_cast_passes_float_gradients_and_stops_at_integers() -> None:
    x = pv.placeholder(pv.float64, [3])
    w = np.array([1.0, -2.0, 0.5], np.float32)
    y = pv.cast(x, pv.float32) * w
    (g,) = pv.gradients(y, [x])
    assert g.dtype is pv.float64
    n = pv.placeholder(pv.float64, [3])
    through_int = pv.cast(pv.cast(n, pv.int32), pv.float64)
    assert pv.gradients(through_int, [n]) == [None]
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: np.zeros(3)}), w)


def test_non_differentiable_ops_pass_no_gradient() -> None:
    x = pv.placeholder(pv.float64, [2])
    y = x + pv.zeros_like(x) + pv.ones_like(x)
    (g,) = pv.gradients(y, [x])
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1.0, 2.0]}), [1.0, 1.0])


# -- names ---------------------------------------------------------------------------------------
def test_names_follow_tensorflow() -> None:
    a = pv.constant(np.ones((2, 3)))
    b = pv.constant(np.ones((3, 4)))
    c = pv.matmul(a, b)
    ga, gb = pv.gradients(c, [a, b])
    assert (ga.op.name, gb.op.name) == (
        "gradients/MatMul_grad/MatMul",
        "gradients/MatMul_grad/MatMul_1",
    )
    graph = pv.get_default_graph()
    # TF 2.21 (TF1 graph mode): ones(shape(y), name="grad_ys_0") makes these three.
    seed = ("gradients/Shape", "gradients/grad_ys_0/Const", "gradients/grad_ys_0")
    assert [graph.get_operation_by_name(n).type for n in seed] == ["Const", "Const", "Fill"]
    assert ga.shape == [2, 3] and gb.shape == [3, 4]
    (again,) = pv.gradients(c, [a])
    assert again.op.name == "gradients_1/MatMul_grad/MatMul"
    with pv.name_scope("tower"):
        d = pv.tanh(c)
    (named,) = pv.gradients(d, [c], name="grads")
    assert named.op.name == "grads/tower/Tanh_grad/TanhGrad"


def test_seed_of_an_unknown_shape_reads_it_at_run_time() -> None:
    x = pv.placeholder(pv.float32)
    (g,) = pv.gradients(pv.identity(x), [x])
    shape_op = pv.get_default_graph().get_operation_by_name("gradients/Shape")
    assert shape_op.type == "Shape"
    with pv.Session() as sess:
        np.testing.assert_array_equal(sess.run(g, {x: np.zeros((2, 5))}), np.ones((2, 5)))


@pytest.mark.parametrize("reduce", [pv.reduce_sum, pv.reduce_max, pv.reduce_min])
def test_a_reduction_over_an_unknown_rank_reads_its_kept_shape_without_reducing_again(
    reduce: Any,
) -> None:
    x = pv.placeholder(pv.float64, name="x")  # rank unknown: only the run says what -1 names
    (g,) = pv.gradients(reduce(x, axis=[-1]), [x])
    graph_ops = pv.get_default_graph().get_operations()
    reductions = [op for op in graph_ops if op.type in ("Sum", "Max", "Min") and x in op.inputs]
    assert len(reductions) == 1  # the forward one: the kept shape comes from shape ops
    xv = np.array([[1.0, 5.0, 2.0], [4.0, 4.0, 0.0]])
    expected = {
        pv.reduce_sum: np.ones_like(xv),
        pv.reduce_max: np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]),
        pv.reduce_min: np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    }[reduce]
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: xv}), expected)
        np.testing.assert_allclose(sess.run(g, {x: xv[None]}), expected[None])


def test_grad_ys_weight_each_y_and_are_checked() -> None:
    x = pv.placeholder(pv.float64, [2])
    y1, y2 = x * 2.0, pv.square(x)
    (g,) = pv.gradients([y1, y2], [x], grad_ys=[[1.0, 10.0], None])
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1.0, 3.0]}), [2 + 2, 20 + 6])
    with pytest.raises(TypeError, match="dtype"):
        pv.gradients(y1, [x], grad_ys=[pv.constant([1.0, 1.0], dtype=pv.float32)])
    with pytest.raises(ValueError, match="grad_ys"):
        pv.gradients([y1, y2], [x], grad_ys=[None])


# -- graph structure: accumulation, reachability, Variables -------------------------------------
def test_several_consumers_accumulate_with_add_n() -> None:
    x = pv.placeholder(pv.float64, [3], name="x")
    y = pv.exp(x) * x + pv.square(x)
    (g,) = pv.gradients(y, [x])
    assert g.op.type == "AddN" and g.op.name == "gradients/AddN"
    # TF's _MultiDeviceAddN: the sum is colocated with its first summand's op
    assert g.op.colocation_groups() == [f"loc:@{g.op.inputs[0].op.name}"]
    xv = np.array([0.5, -1.0, 2.0])
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: xv}), np.exp(xv) * (1 + xv) + 2 * xv)


def test_unreachable_xs_get_none_and_side_branches_are_ignored() -> None:
    x = pv.placeholder(pv.float64, [2])
    unrelated = pv.placeholder(pv.float64, [2])
    y = x * 3.0
    side = pv.exp(x) + unrelated  # consumes x but does not lead to y
    gx, gu = pv.gradients(y, [x, unrelated])
    assert gu is None
    assert "gradients/add_grad" not in {
        op.name.rpartition("/")[0] for op in x.graph.get_operations()
    }
    assert pv.gradients(side, [pv.constant(1.0)]) == [None]
    with pv.Session() as sess:
        np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0]}), [3.0, 3.0])


def test_gradient_flows_through_an_x_that_depends_on_another_x() -> None:
    x = pv.placeholder(pv.float64, [])
    h = x * 2.0
    y = h * h
    gx, gh = pv.gradients(y, [x, h])
    with pv.Session() as sess:
        gx_val, gh_val = sess.run([gx, gh], {x: 3.0})
    assert (gx_val, gh_val) == (24.0, 12.0)


def test_gradients_with_respect_to_variables() -> None:
    w = pv.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), name="w")
    b = pv.Variable(np.array([0.5, -0.5]), name="b")
    x = pv.constant(np.array([[1.0, -1.0]]))
    loss = pv.reduce_sum(pv.square(pv.matmul(x, w) + b))
    gw, gb = pv.gradients(loss, [w, b])
    assert (gw.shape, gb.shape) == ([2, 2], [2])
    assert gw.op.name == "gradients/MatMul_grad/MatMul_1"
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        residual = np.array([[1.0, -1.0]]) @ np.array([[1.0, 2.0], [3.0, 4.0]]) + [0.5, -0.5]
        gw_val, gb_val = sess.run([gw, gb])
        np.testing.assert_allclose(gw_val, np.array([[1.0], [-1.0]]) @ (2 * residual))
        np.testing.assert_allclose(gb_val, 2 * residual[0])
        sess.run(w.assign(np.zeros((2, 2))))
        np.testing.assert_allclose(sess.run(gb), 2 * np.array([0.5, -0.5]))
    (single,) = pv.gradients(loss, w)
    assert single.shape == [2, 2]


# -- devices -------------------------------------------------------------------------------------
def _two_tower_graph() -> tuple[pv.Tensor, list[pv.Tensor]]:
    with pv.device("/cpu:0"):
        x = pv.placeholder(pv.float32, name="x")  # unknown shape: shape ops are needed
    with pv.device("/gpu:1"):
        w1 = pv.Variable(np.ones((3, 3), np.float32), name="w1")
        h = pv.nn.relu(pv.matmul(x, w1) + 1.0)
    with pv.device("/gpu:2"):
        w2 = pv.Variable(np.ones((3, 1), np.float32), name="w2")
        loss = pv.reduce_mean(pv.square(pv.matmul(h, w2)))
    return loss, [x, w1, w2]


def _grad_op_names(graph: pv.Graph, prefix: str) -> list[str]:
    return [op.name for op in graph.get_operations() if op.name.startswith(prefix)]


def test_colocated_gradients_run_on_their_forward_ops_devices(gpus4: None) -> None:
    loss, (x, w1, w2) = _two_tower_graph()
    grads_ = pv.gradients(loss, [w1, w2], colocate_gradients_with_ops=True)
    graph = pv.get_default_graph()
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        gw1, gw2 = sess.run(grads_, {x: np.ones((2, 3), np.float32)})
        checked = 0
        for op in graph.get_operations():
            forward, sep, _ = op.name.partition("_grad/")
            if not op.name.startswith("gradients/") or not sep:
                continue
            forward_name = forward.removeprefix("gradients/")
            assert sess.placement[op.name] == sess.placement[forward_name], op.name
            checked += 1
        assert checked > 20
        assert sess.placement["gradients/MatMul_grad/MatMul_1"] == f"{LOCAL}GPU:1"
        assert sess.placement["gradients/MatMul_1_grad/MatMul_1"] == f"{LOCAL}GPU:2"
        assert sess.placement["gradients/Relu_grad/ReluGrad"] == f"{LOCAL}GPU:1"
        assert sess.placement["gradients/grad_ys_0"] == f"{LOCAL}GPU:2"  # the seed's Fill
        shape_ops_ = [
            n
            for n in _grad_op_names(graph, "gradients/")
            if graph.get_operation_by_name(n).type == "Shape"
        ]
        assert shape_ops_ and all(sess.placement[n] != f"{LOCAL}CPU:0" for n in shape_ops_)
    # h = relu(x @ 1 + 1) = 4 everywhere; loss = mean((h @ 1)^2) = 144
    np.testing.assert_allclose(gw2, np.full((3, 1), 2 * 12 * 4), rtol=1e-6)
    np.testing.assert_allclose(gw1, np.full((3, 3), 2 * 12 * 2 / 2), rtol=1e-6)


def test_gradients_take_the_device_scope_of_the_call(gpus4: None) -> None:
    loss, (x, w1, w2) = _two_tower_graph()
    with pv.device("/gpu:3"):
        grads_ = pv.gradients(loss, [w1, w2])
    graph = pv.get_default_graph()
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        sess.run(grads_, {x: np.ones((2, 3), np.float32)})
        names = _grad_op_names(graph, "gradients/")
        assert names and all(sess.placement[n] == f"{LOCAL}GPU:3" for n in names)
