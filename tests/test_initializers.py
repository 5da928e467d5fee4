"""Initializers' distributions, TruncatedNormal's kernel, custom getters and collections.

Random values cannot match TensorFlow's, so these check what TF promises about them: bounds,
moments (against formulas computed here from the shape, not from placeviz), and seeding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz.graph.core import Graph
from placeviz.graph.grads import registered_types

TRUNCATED_STD = 0.87962566103423978  # std of a standard normal truncated to (-2, 2)


@pytest.fixture(autouse=True)
def fresh_graph() -> Iterator[Graph]:
    with pv.Graph().as_default() as graph:
        yield graph


def initialized(*variables: Any) -> list[np.ndarray]:
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    return sess.run(list(variables))


# -- TruncatedNormal ---------------------------------------------------------------------------
def test_truncated_normal_stays_within_two_stddevs_with_truncated_moments() -> None:
    values = pv.Session().run(pv.truncated_normal([400_000], mean=3.0, stddev=0.5, seed=1))
    assert values.dtype == np.float32 and values.shape == (400_000,)
    assert np.all(np.abs(values - 3.0) < 1.0)
    assert abs(values.mean() - 3.0) < 0.005
    assert abs(values.std() - 0.5 * TRUNCATED_STD) < 0.005


@pytest.mark.parametrize("dtype", [pv.float16, pv.float64])
def test_truncated_normal_other_float_dtypes(dtype: pv.DType) -> None:
    t = pv.random.truncated_normal([50_000], dtype=dtype)
    assert t.op.inputs[0].op.inputs[0].op.type == "TruncatedNormal"
    values = pv.Session().run(t)
    assert values.dtype == dtype.np
    # float16 rounds draws just under 2 up to 2.0, as TF's half kernel (it converts after the test)
    assert np.all(np.abs(values.astype(np.float64)) <= 2.0)
    assert abs(values.astype(np.float64).std() - TRUNCATED_STD) < 0.02


def test_truncated_normal_seeds_repeat_across_sessions_and_draw_anew_each_run() -> None:
    pv.set_random_seed(7)
    a = pv.truncated_normal([6], seed=3)
    b = pv.truncated_normal([6], seed=4)
    first, second = pv.Session(), pv.Session()
    a1, b1 = first.run([a, b])
    np.testing.assert_array_equal(a1, second.run(a))
    assert not np.array_equal(a1, b1)
    assert not np.array_equal(a1, first.run(a))


def test_truncated_normal_rejects_non_float_dtypes() -> None:
    with pytest.raises(ValueError, match="TruncatedNormal does not support int64"):
        pv.truncated_normal([2], mean=0, stddev=1, dtype=pv.int64)


def test_truncated_normal_is_declared_not_differentiable() -> None:
    """TF's ``ops.NotDifferentiable("TruncatedNormal")``: gradients stop at the draw."""
    assert registered_types()["TruncatedNormal"] is False


def test_truncated_normal_scalar_shape_stays_truncated() -> None:
    t = pv.truncated_normal([])
    sess = pv.Session()
    values = np.array([sess.run(t) for _ in range(3000)])
    assert values.dtype == np.float32 and np.abs(values).max() < 2.0


# -- VarianceScaling and its kin ----------------------------------------------------------------
def _fans(shape: list[int]) -> tuple[float, float]:
    receptive = float(np.prod(shape[:-2])) if len(shape) > 2 else 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    return shape[-2] * receptive, shape[-1] * receptive


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
def test_variance_scaling_gives_the_variance_it_promises(mode: str, distribution: str) -> None:
    shape = [3, 3, 40, 90]
    fan_in, fan_out = _fans(shape)
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    init = pv.variance_scaling_initializer(2.0, mode, distribution, seed=5)
    (values,) = initialized(pv.get_variable("w", shape, initializer=init))
    expected_std = math.sqrt(2.0 / n)
    assert abs(values.std() / expected_std - 1.0) < 0.02
    assert abs(values.mean()) < 0.02 * expected_std * 10
    if distribution == "uniform":
        assert np.abs(values).max() <= math.sqrt(3.0) * expected_std
    if distribution == "truncated_normal":
        assert np.abs(values).max() < 2.0 * expected_std / TRUNCATED_STD


def test_variance_scaling_defaults_are_tf1s() -> None:
    init = pv.variance_scaling_initializer()
    assert (init.scale, init.mode, init.distribution, init.dtype) == (
        1.0,
        "fan_in",
        "truncated_normal",
        pv.float32,
    )
    stddev = init([50, 7]).op.inputs[0].op.inputs[1]
    assert stddev.op.type == "Const"
    np.testing.assert_allclose(pv.Session().run(stddev), math.sqrt(1 / 50) / TRUNCATED_STD)


def test_glorot_normal_std() -> None:
    (values,) = initialized(
        pv.get_variable("w", [200, 300], initializer=pv.glorot_normal_initializer(seed=1))
    )
    assert abs(values.std() - math.sqrt(2.0 / 500)) < 0.001


def test_glorot_uniform_bounds() -> None:
    (values,) = initialized(
        pv.get_variable("w", [200, 300], initializer=pv.glorot_uniform_initializer())
    )
    limit = math.sqrt(6.0 / 500)
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.99 * limit


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"scale": -1.0}, "`scale` must be a positive float. Received: -1.0"),
        ({"mode": "fan"}, "`mode` should be one of ('fan_in', 'fan_out', 'fan_avg'). Received"),
        ({"distribution": "x"}, "`distribution` should be one of ('normal', uniform'"),
        ({"dtype": pv.int32}, "`dtype` is expected to be floating point"),
    ],
)
def test_variance_scaling_rejects_bad_arguments(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError) as caught:
        pv.variance_scaling_initializer(**kwargs)
    assert words in str(caught.value)


def test_initializers_seeded_repeat_across_graphs() -> None:
    def draw() -> np.ndarray:
        with pv.Graph().as_default():
            init = pv.truncated_normal_initializer(stddev=0.3, seed=11)
            pv.set_random_seed(2)
            (value,) = initialized(pv.get_variable("w", [4, 4], initializer=init))
            return value

    np.testing.assert_array_equal(draw(), draw())


# -- custom getters ----------------------------------------------------------------------------
def test_custom_getters_compose_inner_first_and_can_transform() -> None:
    calls: list[str] = []

    def outer(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append("outer")
        return getter(name, *args, **kwargs)

    def doubled(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append("inner")
        return getter(name, *args, **kwargs) * 2.0

    with (
        pv.variable_scope("a", custom_getter=outer),
        pv.variable_scope("b", custom_getter=doubled) as scope,
    ):
        y = pv.get_variable("w", [2], initializer=pv.ones_initializer())
    assert calls == ["inner", "outer"]
    assert scope.custom_getter is not doubled  # the composition
    assert y.op.name == "mul" and pv.global_variables()[0].op.name == "a/b/w"
    np.testing.assert_array_equal(initialized(y)[0], [2.0, 2.0])


def test_custom_getter_device_scope_places_the_variable() -> None:
    def on_cpu(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        with pv.device("/cpu:0"):
            return getter(name, *args, **kwargs)

    with pv.device("/gpu:0"), pv.variable_scope("v", custom_getter=on_cpu):
        w = pv.get_variable("w", [2])
        y = w * 2.0
    assert w.device == "/device:CPU:0" and y.op.device == "/device:GPU:0"


def test_scope_dtype_is_the_default_and_reaches_the_getter() -> None:
    seen: list[Any] = []

    def record(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["dtype"])
        return getter(name, *args, **kwargs)

    with pv.variable_scope("s", dtype=pv.float64, custom_getter=record):
        w = pv.get_variable("w", [1])
    assert seen == [pv.float64] and w.dtype == pv.float64_ref


def test_uncallable_custom_getter_fails_on_use() -> None:
    with (
        pv.variable_scope("s", custom_getter=3),
        pytest.raises(ValueError, match="Passed a custom_getter which is not callable: 3"),
    ):
        pv.get_variable("w", [1])


# -- collections -------------------------------------------------------------------------------
def test_collections_scope_is_re_match_on_names(fresh_graph: Graph) -> None:
    items = [pv.constant(1.0, name=n) for n in ("ab", "abc", "xab")]
    for item in items:
        pv.add_to_collection("k", item)
    pv.add_to_collection("k", 5)  # nameless items drop out of filtered results
    assert pv.get_collection("k", "ab") == items[:2]
    assert fresh_graph.get_collection("k", ".*ab") == items
    assert pv.get_collection("k", "ab$") == []  # names carry ':0'
    assert pv.get_collection("k")[-1] == 5


def test_collection_copies_refs_keys_and_clearing(fresh_graph: Graph) -> None:
    ref = pv.get_collection_ref("r")
    ref.append(1)
    copy = pv.get_collection("r")
    copy.append(2)
    assert pv.get_collection("r") == [1] and pv.get_collection_ref("r") is ref
    pv.add_to_collections(("x", "y", "x"), 3)
    assert pv.get_collection("x") == [3] and pv.get_collection("y") == [3]
    pv.get_variable("w", [1])
    assert fresh_graph.get_all_collection_keys() == [
        "r",
        "x",
        "y",
        pv.GraphKeys.GLOBAL_VARIABLES,
        pv.GraphKeys.TRAINABLE_VARIABLES,
    ]
    fresh_graph.clear_collection("x")
    assert pv.get_collection("x") == []


def test_finalized_graph_refuses_collection_changes(fresh_graph: Graph) -> None:
    fresh_graph.finalize()
    with pytest.raises(RuntimeError, match="Graph is finalized"):
        pv.add_to_collection("k", 1)


def test_variable_collections_argument() -> None:
    local = pv.Variable(0, name="n", collections=[pv.GraphKeys.LOCAL_VARIABLES])
    model = pv.get_variable(
        "m", [1], collections=[pv.GraphKeys.GLOBAL_VARIABLES, pv.GraphKeys.MODEL_VARIABLES]
    )
    frozen = pv.get_variable("f", [1], trainable=False)
    assert pv.local_variables() == [local] and pv.model_variables() == [model]
    assert pv.global_variables() == [model, frozen]
    assert pv.trainable_variables() == [local, model]
    assert pv.trainable_variables("m") == [model]
    with pytest.raises(ValueError, match="must be a list, tuple, or set"):
        pv.Variable(1.0, collections="mine")


# -- tf.compat.v1.keras.initializers -----------------------------------------------------------
def test_keras_initializers_defaults() -> None:
    k = pv.keras.initializers
    shape = [300, 100]
    he, lecun_u, small = initialized(
        pv.get_variable("he", shape, initializer=k.he_normal(seed=1)),
        pv.get_variable("lu", shape, initializer=k.lecun_uniform()),
        pv.get_variable("tn", shape, initializer=k.TruncatedNormal()),
    )
    assert abs(he.std() - math.sqrt(2.0 / 300)) < 0.002
    assert np.abs(lecun_u).max() <= math.sqrt(3.0 / 300)
    assert abs(small.std() - 0.05 * TRUNCATED_STD) < 0.001
    assert (k.RandomUniform().minval, k.RandomUniform().maxval) == (-0.05, 0.05)
    assert k.random_normal().stddev == 0.05 and k.glorot_uniform is pv.glorot_uniform_initializer
