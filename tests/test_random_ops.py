"""random_ops: TF's op types and names, attrs for the seed, and kernels that draw on every call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from placeviz import dtypes
from placeviz import errors as pv_errors
from placeviz.graph.core import Graph, Tensor, get_default_graph
from placeviz.graph.ops import constant_op, random_ops
from placeviz.graph.shapes import TensorShape
from placeviz.runtime.session import Session


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[Graph]:
    with Graph().as_default() as graph:
        yield graph


# -- random_uniform ----------------------------------------------------------------------------
def _ops_of(tensor: Tensor) -> list[tuple[str, str, list[str]]]:
    """Every op made for ``tensor``, as (name, type, input names), in creation order."""
    return [(op.name, op.type, [t.name for t in op.inputs]) for op in get_default_graph()._ops]


def _run(tensor: Tensor) -> Any:
    return Session(graph=tensor.graph).run(tensor)


def test_random_uniform_builds_tensorflows_ops() -> None:
    """TensorFlow 2.21 (tf.compat.v1) builds exactly these ops for these calls."""
    unit = random_ops.random_uniform([2, 3], seed=5)
    assert _ops_of(unit) == [
        ("random_uniform/shape", "Const", []),
        ("random_uniform/RandomUniform", "RandomUniform", ["random_uniform/shape:0"]),
    ]
    assert unit.op.op_def.stateful and unit.op.attrs["seed"] == 5
    assert (unit.shape, unit.dtype) == (TensorShape([2, 3]), dtypes.float32)
    ranged = random_ops.random_uniform((4,), minval=-1.0, maxval=2.0)
    assert [(name, kind) for name, kind, _ in _ops_of(ranged)[2:]] == [
        ("random_uniform_1/shape", "Const"),
        ("random_uniform_1/min", "Const"),
        ("random_uniform_1/max", "Const"),
        ("random_uniform_1/RandomUniform", "RandomUniform"),
        ("random_uniform_1/sub", "Sub"),
        ("random_uniform_1/mul", "Mul"),
        ("random_uniform_1", "AddV2"),
    ]
    ints = random_ops.random_uniform([2], 0, 10, dtype=dtypes.int32)
    assert _ops_of(ints)[-1] == (
        "random_uniform_2",
        "RandomUniformInt",
        ["random_uniform_2/shape:0", "random_uniform_2/min:0", "random_uniform_2/max:0"],
    )
    assert random_ops.random_uniform([], name="r").op.name == "r/RandomUniform"


def test_random_uniform_draws_new_values_in_its_range_each_run() -> None:
    u = random_ops.random_uniform([3, 4], minval=-2.0, maxval=3.0)
    sess = Session(graph=u.graph)
    first, second = sess.run(u), sess.run(u)
    assert (first.dtype, first.shape) == (np.float32, (3, 4))
    assert not np.array_equal(first, second)
    assert ((second >= -2.0) & (second < 3.0)).all()


def test_random_uniform_float16_stays_below_maxval() -> None:
    values = _run(random_ops.random_uniform([200_000], dtype=dtypes.float16))
    assert values.dtype == np.float16
    assert values.min() >= 0.0
    assert values.max() < 1.0
    assert 0.45 < float(values.astype(np.float32).mean()) < 0.55


def test_random_uniform_float64_and_scalar_shape() -> None:
    value = np.asarray(_run(random_ops.random_uniform([], dtype=dtypes.float64)))
    assert (value.dtype, value.shape) == (np.float64, ())


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.int64])
def test_random_uniform_integers(dtype: dtypes.DType) -> None:
    values = _run(random_ops.random_uniform([1000], minval=-3, maxval=4, dtype=dtype))
    assert values.dtype == dtype.np
    assert set(np.unique(values).tolist()) == set(range(-3, 4))


def test_random_uniform_integers_need_maxval() -> None:
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype int32"):
        random_ops.random_uniform([2], dtype=dtypes.int32)


def test_random_uniform_errors_are_tensorflows() -> None:
    empty = random_ops.random_uniform([2], minval=3, maxval=3, dtype="int32")
    with pytest.raises(pv_errors.InvalidArgumentError, match="Need minval < maxval: 3 >= 3") as e:
        _run(empty)  # as in TensorFlow, the range is checked when the op runs
    assert "'random_uniform' (RandomUniformInt)" in str(e.value)
    assert "test_random_ops.py" in str(e.value)
    with pytest.raises(TypeError, match="int32"):
        random_ops.random_uniform([2], minval=0.5, maxval=3, dtype="int32")
    with pytest.raises(TypeError, match="out of range"):
        random_ops.random_uniform([2], maxval=2**40, dtype="int32")
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value bool"):
        random_ops.random_uniform([2], dtype=dtypes.bool)


def test_shape_may_be_a_tensor_and_bounds_tensors() -> None:
    with pytest.raises(ValueError, match="fully defined"):
        random_ops.random_uniform(TensorShape([None, 2]))
    with pytest.raises(ValueError, match="non-negative"):
        random_ops.random_normal([-1])
    bound = random_ops.random_uniform([], minval=5.0, maxval=6.0)
    shape = constant_op.constant([3], dtypes.int32)
    drawn = random_ops.random_uniform(shape, maxval=bound)
    assert drawn.shape == TensorShape([3])
    assert ((_run(drawn) >= 0.0) & (_run(drawn) < 6.0)).all()
    with pytest.raises(TypeError, match="seed must be an int"):
        random_ops.random_normal([2], seed=1.5)


# -- random_normal -----------------------------------------------------------------------------
def test_random_normal_builds_tensorflows_ops() -> None:
    n = random_ops.random_normal([5], mean=1.0, stddev=2.0, seed=3, name="rn")
    assert _ops_of(n) == [
        ("rn/shape", "Const", []),
        ("rn/mean", "Const", []),
        ("rn/stddev", "Const", []),
        ("rn/RandomStandardNormal", "RandomStandardNormal", ["rn/shape:0"]),
        ("rn/mul", "Mul", ["rn/RandomStandardNormal:0", "rn/stddev:0"]),
        ("rn", "AddV2", ["rn/mul:0", "rn/mean:0"]),
    ]
    draw = n.op.inputs[0].op.inputs[0].op
    assert draw.op_def.stateful and draw.attrs["seed"] == 3
    assert (n.shape, n.dtype) == (TensorShape([5]), dtypes.float32)
    assert not draw.op_def.supports("GPU", dtypes.int32)


def test_random_normal_values_are_scaled_and_shifted_standard_normals() -> None:
    random_ops.set_random_seed(11)
    n = random_ops.random_normal([4, 2], mean=1.0, stddev=2.0, dtype=dtypes.float64)
    standard = n.op.inputs[0].op.inputs[0]
    sess = Session(graph=n.graph)
    value, draw = sess.run([n, standard])
    np.testing.assert_array_equal(value, draw * 2.0 + 1.0)
    assert value.dtype == np.float64
    assert not np.array_equal(value, sess.run(n))


def test_random_normal_float16_statistics() -> None:
    n = random_ops.random_normal([100_000], mean=-1.0, stddev=0.5, dtype=dtypes.float16)
    values = _run(n).astype(np.float64)
    assert abs(values.mean() + 1.0) < 0.01
    assert abs(values.std() - 0.5) < 0.01


def test_random_normal_needs_a_float_dtype() -> None:
    with pytest.raises(TypeError, match="int32"):
        random_ops.random_normal([2], dtype=dtypes.int32)


def test_set_random_seed_sets_the_default_graph_seed() -> None:
    random_ops.set_random_seed(42)
    assert get_default_graph().seed == 42
    with Graph().as_default() as other:
        assert other.seed is None
    random_ops.set_random_seed(None)
    assert get_default_graph().seed is None


def test_costs_count_written_bytes() -> None:
    u = random_ops.random_uniform([10], dtype=dtypes.float64)
    assert u.op.op_def.cost(u.op, [(1,)], [(10,)]) == (40.0, 80.0)


# -- end to end through a Session --------------------------------------------------------------
def test_session_draws_new_values_on_every_run(fresh_graph: Graph) -> None:
    u = random_ops.random_uniform([3], minval=1.0, maxval=2.0)
    sess = Session(graph=fresh_graph)
    first, second = sess.run(u), sess.run(u)
    assert first.shape == (3,)
    assert ((first >= 1.0) & (first < 2.0)).all()
    assert not np.array_equal(first, second)


def test_session_op_seed_repeats_across_sessions(fresh_graph: Graph) -> None:
    n = random_ops.random_normal([4], seed=7)
    runs = [Session(graph=fresh_graph).run(n) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_session_graph_seed_repeats_across_sessions(fresh_graph: Graph) -> None:
    random_ops.set_random_seed(1234)
    u = random_ops.random_uniform([4], maxval=10, dtype=dtypes.int64)
    n = random_ops.random_normal([4])
    first = Session(graph=fresh_graph).run([u, n])
    second = Session(graph=fresh_graph).run([u, n])
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert first[0].dtype == np.int64
