"""random_ops: TF's op types and names, attrs for the seed, and kernels that draw on every call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from placeviz import dtypes
from placeviz import errors as pv_errors
from placeviz.graph.core import Graph, Tensor, get_default_graph
from placeviz.graph.ops import random_ops
from placeviz.graph.shapes import TensorShape
from placeviz.runtime.session import Session


class _State:
    """Hands out one seeded generator per call and counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def rng(self, op: Any) -> np.random.Generator:
        self.calls += 1
        return np.random.default_rng(0)


def build_kernel(tensor: Tensor, state: Any = None) -> Any:
    op = tensor.op
    return op.op_def.kernel_for("numpy")(np, op, state or _State())


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[Graph]:
    with Graph().as_default() as graph:
        yield graph


# -- random_uniform ----------------------------------------------------------------------------
def test_random_uniform_op() -> None:
    u = random_ops.random_uniform([2, 3], seed=5)
    u1 = random_ops.random_uniform((4,), minval=-1.0, maxval=2.0)
    assert (u.op.type, u.op.name, u1.op.name) == (
        "RandomUniform",
        "random_uniform",
        "random_uniform_1",
    )
    assert u.op.inputs == ()
    assert u.op.op_def.stateful
    assert (u.shape, u.dtype) == (TensorShape([2, 3]), dtypes.float32)
    assert (u.op.attrs["seed"], u1.op.attrs["seed"]) == (5, None)
    assert (u.op.attrs["minval"], u.op.attrs["maxval"]) == (0, 1)
    assert random_ops.random_uniform([], name="r").op.name == "r"


def test_random_uniform_kernel_draws_new_values_each_call() -> None:
    u = random_ops.random_uniform([3, 4], minval=-2.0, maxval=3.0)
    state = _State()
    kernel = build_kernel(u, state)
    first, second = kernel(), kernel()
    assert state.calls == 1  # the generator is fetched once, in the builder
    expected = np.random.default_rng(0).random((3, 4), dtype=np.float32) * 5.0 - 2.0
    np.testing.assert_allclose(first, expected, rtol=1e-6)
    assert first.dtype == np.float32
    assert first.shape == (3, 4)
    assert not np.array_equal(first, second)
    assert ((second >= -2.0) & (second < 3.0)).all()


def test_random_uniform_float16_stays_below_maxval() -> None:
    u = random_ops.random_uniform([200_000], dtype=dtypes.float16)
    values = build_kernel(u)()
    assert values.dtype == np.float16
    assert values.min() >= 0.0
    assert values.max() < 1.0
    assert 0.45 < float(values.astype(np.float32).mean()) < 0.55


def test_random_uniform_float64_and_scalar_shape() -> None:
    u = random_ops.random_uniform([], dtype=dtypes.float64)
    value = build_kernel(u)()
    assert (value.dtype, value.shape) == (np.float64, ())


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.int64])
def test_random_uniform_integers(dtype: dtypes.DType) -> None:
    u = random_ops.random_uniform([1000], minval=-3, maxval=4, dtype=dtype)
    values = build_kernel(u)()
    assert values.dtype == dtype.np
    assert set(np.unique(values).tolist()) == set(range(-3, 4))


def test_random_uniform_integers_need_maxval() -> None:
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype int32"):
        random_ops.random_uniform([2], dtype=dtypes.int32)


def test_random_uniform_errors_name_the_op() -> None:
    with pytest.raises(pv_errors.InvalidArgumentError, match="Need minval < maxval") as info:
        random_ops.random_uniform([2], minval=3, maxval=3, dtype="int32")
    assert "'random_uniform' (RandomUniform)" in str(info.value)
    assert "test_random_ops.py" in str(info.value)
    with pytest.raises(pv_errors.DTypeMismatchError, match="must be an integer"):
        random_ops.random_uniform([2], minval=0.5, maxval=3, dtype="int32")
    with pytest.raises(pv_errors.InvalidArgumentError, match="out of range"):
        random_ops.random_uniform([2], maxval=2**40, dtype="int32")
    with pytest.raises(pv_errors.DTypeMismatchError, match="RandomUniform does not support bool"):
        random_ops.random_uniform([2], dtype=dtypes.bool)


def test_shape_and_args_must_be_static() -> None:
    with pytest.raises(ValueError, match="fully defined"):
        random_ops.random_uniform(TensorShape([None, 2]))
    with pytest.raises(ValueError, match="non-negative"):
        random_ops.random_normal([-1])
    bound = random_ops.random_uniform([])
    with pytest.raises(TypeError, match="maxval must be a Python number"):
        random_ops.random_uniform([2], maxval=bound)
    with pytest.raises(TypeError, match="seed must be an int"):
        random_ops.random_normal([2], seed=1.5)


# -- random_normal -----------------------------------------------------------------------------
def test_random_normal_op() -> None:
    n = random_ops.random_normal([5], mean=1.0, stddev=2.0, seed=3)
    n1 = random_ops.random_normal([5])
    assert (n.op.type, n.op.name, n1.op.name) == (
        "RandomStandardNormal",
        "random_normal",
        "random_normal_1",
    )
    assert n.op.op_def.stateful
    assert (n.shape, n.dtype, n.op.attrs["seed"]) == (TensorShape([5]), dtypes.float32, 3)
    assert not n.op.op_def.supports("GPU", dtypes.int32)


def test_random_normal_kernel() -> None:
    n = random_ops.random_normal([4, 2], mean=1.0, stddev=2.0, dtype=dtypes.float64)
    kernel = build_kernel(n)
    first, second = kernel(), kernel()
    expected = np.random.default_rng(0).standard_normal((4, 2), dtype=np.float64) * 2.0 + 1.0
    np.testing.assert_allclose(first, expected)
    assert first.dtype == np.float64
    assert not np.array_equal(first, second)


def test_random_normal_float16_statistics() -> None:
    n = random_ops.random_normal([100_000], mean=-1.0, stddev=0.5, dtype=dtypes.float16)
    values = build_kernel(n)().astype(np.float64)
    assert abs(values.mean() + 1.0) < 0.01
    assert abs(values.std() - 0.5) < 0.01


def test_random_normal_needs_a_float_dtype() -> None:
    with pytest.raises(pv_errors.DTypeMismatchError, match="'random_normal'"):
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
    assert u.op.op_def.cost(u.op, [], [(10,)]) == (40.0, 80.0)


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
