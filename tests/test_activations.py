"""Activations, Rsqrt/Erf/Erfc/Log1p/SquaredDifference/NotEqual and the composite ``pv.nn``
functions (moments, batch normalization, L2 normalization, logistic loss, GELU): values against
NumPy references written here from the definitions, gradients against central differences,
TensorFlow's errors, and where each op has kernels."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_gradients import MODES, check_gradients

import placeviz as pv
from placeviz.graph import registry

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])

# Both sides of every kink, 0 itself, and magnitudes where exp overflows float32.
X = np.array([-100.0, -20.0, -2.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 2.0, 5.999, 6.0, 7.0, 100.0])


def _run(fetches: Any, feed: dict[Any, Any] | None = None) -> Any:
    with pv.Session() as sess:
        return sess.run(fetches, feed)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


REFERENCES: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = {
    "Softplus": (pv.nn.softplus, _softplus),
    "Elu": (pv.nn.elu, lambda x: np.where(x > 0, x, np.exp(np.minimum(x, 0)) - 1)),
    "Selu": (
        pv.nn.selu,
        lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(np.minimum(x, 0)) - 1)),
    ),
    "Relu6": (pv.nn.relu6, lambda x: np.clip(x, 0, 6)),
    # alpha is a float32 attr, so float64 features see float32's 0.2, as in TF
    "LeakyRelu": (pv.nn.leaky_relu, lambda x: np.where(x > 0, x, float(np.float32(0.2)) * x)),
    "Erf": (pv.erf, _erf),
    "Erfc": (pv.math.erfc, _erfc),
    "Gelu": (pv.nn.gelu, lambda x: x * _erfc(-x / math.sqrt(2)) / 2),
    "Gelu_approximate": (
        lambda x: pv.nn.gelu(x, approximate=True),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(REFERENCES))
def test_values_match_the_definitions(case: str, dtype: str) -> None:
    fn, reference = REFERENCES[case]
    with pv.Graph().as_default():
        got = _run(fn(pv.constant(X.astype(dtype))))
    assert got.dtype == dtype
    # gelu rounds its coefficients to float32 first, as TF does
    rtol = 1e-6 if dtype == "float32" or case.startswith("Gelu") else 1e-13
    np.testing.assert_allclose(got, reference(X), rtol=rtol, atol=1e-30)
    assert np.all(np.isfinite(got))


def test_float16_activations_keep_their_dtype() -> None:
    values = np.array([-1.0, 0.5, 7.0], np.float16)
    with pv.Graph().as_default():
        x = pv.constant(values)
        outputs = _run([pv.nn.elu(x), pv.nn.relu6(x), pv.erf(x), pv.nn.softplus(x)])
    assert [o.dtype for o in outputs] == [np.float16] * 4
    np.testing.assert_allclose(outputs[1], [0.0, 0.5, 6.0])
    np.testing.assert_allclose(outputs[2], _erf(values.astype(np.float64)), rtol=1e-3)


def test_erf_is_accurate_to_float64_across_its_range() -> None:
    x = np.concatenate([np.linspace(-7, 7, 2801), [0.999999, 1.0, 7.99, 8.0, 26.0, 30.0, 1e300]])
    with pv.Graph().as_default():
        t = pv.constant(x)
        erf, erfc = _run([pv.erf(t), pv.math.erfc(t)])
    np.testing.assert_allclose(erf, _erf(x), rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(erfc, _erfc(x), rtol=1e-13, atol=1e-300)
    with pv.Graph().as_default():
        ends = _run(pv.erf(pv.constant([-np.inf, np.inf, np.nan])))
    np.testing.assert_array_equal(ends, [-1.0, 1.0, np.nan])


def test_rsqrt_log1p_and_squared_difference() -> None:
    x = np.array([0.25, 1.0, 4.0, 1e-8], np.float32)
    with pv.Graph().as_default():
        rsqrt = pv.rsqrt(x)
        log1p = pv.log1p(pv.constant([1e-10, -0.5, 3.0], pv.float64))
        diff = pv.squared_difference(pv.constant([[1, 5]]), pv.constant([[3], [-2]]))
        assert [t.op.name for t in (rsqrt, log1p, diff)] == ["Rsqrt", "Log1p", "SquaredDifference"]
        assert rsqrt.op.inputs[0].op.name == "Rsqrt/x"  # a Python value, named for its arg
        got = _run([rsqrt, log1p, diff])
    np.testing.assert_allclose(got[0], 1 / np.sqrt(x.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(got[1], [1e-10 - 5e-21, math.log(0.5), math.log(4.0)], rtol=1e-15)
    np.testing.assert_array_equal(got[2], [[4, 4], [9, 49]])
    assert got[2].dtype == np.int32


def test_scalars() -> None:
    with pv.Graph().as_default():
        ops = [pv.squared_difference(pv.constant(1.0), 3.0), pv.rsqrt(4.0), pv.nn.relu6(7)]
        got = _run([*ops, pv.nn.elu(-1.0), pv.nn.gelu(0.0), pv.erf(pv.constant(0.0, pv.float64))])
    np.testing.assert_allclose(got, [4.0, 0.5, 6.0, math.exp(-1.0) - 1, 0.0, 0.0], rtol=1e-6)


def test_leaky_relu_stores_alpha_as_float32_and_casts_integers() -> None:
    with pv.Graph().as_default():
        y = pv.nn.leaky_relu(pv.constant([-1.0, 2.0], pv.float64), alpha=0.1)
        ints = pv.nn.leaky_relu(pv.constant([-5, 3]), alpha=np.array(0.5))
        assert y.op.attrs["alpha"] == float(np.float32(0.1))
        assert [op.type for op in pv.get_default_graph().get_operations()][-2:] == [
            "Cast",
            "LeakyRelu",
        ]
        assert ints.op.inputs[0].op.name == "LeakyRelu_1/Cast"
        got = _run([y, ints])
    np.testing.assert_array_equal(got[0], [-float(np.float32(0.1)), 2.0])
    np.testing.assert_array_equal(got[1], np.array([-2.5, 3.0], np.float32))


def test_comparisons_all_exist_and_order_only_numbers() -> None:
    a, b = np.array([1, 2, 3]), np.array([2, 2, 2])
    with pv.Graph().as_default():
        x, y = pv.constant(a), pv.constant(b)
        ops = [pv.equal, pv.not_equal, pv.less, pv.less_equal, pv.greater, pv.greater_equal]
        got = _run([op(x, y) for op in ops])
        strings = _run(pv.not_equal(pv.constant(["a", "b"]), "a"))
        with pytest.raises(TypeError, match="string"):
            pv.less(pv.constant(["a"]), pv.constant(["b"]))
    expected = [a == b, a != b, a < b, a <= b, a > b, a >= b]
    for value, want in zip(got, expected):
        np.testing.assert_array_equal(value, want)
    np.testing.assert_array_equal(strings, [False, True])


# -- the composite functions --------------------------------------------------------------------
MATRIX = np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0], [-1.0, 0.5, 2.0]])


@pytest.mark.parametrize("axes", [[0], [1], [0, 1], [-1]])
@pytest.mark.parametrize("keep", [False, True])
def test_moments(axes: list[int], keep: bool) -> None:
    with pv.Graph().as_default():
        mean, variance = pv.nn.moments(pv.constant(MATRIX), axes, keep_dims=keep)
        got = _run([mean, variance])
    want = (np.mean(MATRIX, tuple(axes), keepdims=keep), np.var(MATRIX, tuple(axes), keepdims=keep))
    for value, reference in zip(got, want):
        assert value.shape == reference.shape
        np.testing.assert_allclose(value, reference, rtol=1e-13)


def test_moments_of_float16_are_computed_in_float32() -> None:
    # float16's sum of squares of 300s would overflow (65504 is its largest value)
    values = np.array([300.0, 310.0, 290.0, 300.0], np.float16)
    with pv.Graph().as_default():
        mean, variance = pv.nn.moments(pv.constant(values), axes=[0])
        assert [op.type for op in pv.get_default_graph().get_operations()].count("Cast") == 3
        got = _run([mean, variance])
    assert [g.dtype for g in got] == [np.float16, np.float16]
    np.testing.assert_allclose(got, [300.0, 50.0])


@pytest.mark.parametrize("with_offset_and_scale", [False, True])
def test_batch_normalization(with_offset_and_scale: bool) -> None:
    mean, variance = MATRIX.mean(0), MATRIX.var(0)
    offset, scale = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.25])
    with pv.Graph().as_default():
        args = (pv.constant(offset), scale) if with_offset_and_scale else (None, None)
        moments = pv.constant(mean), pv.constant(variance)
        y = pv.nn.batch_normalization(pv.constant(MATRIX), *moments, *args, 1e-3)
        got = _run(y)
    want = (MATRIX - mean) / np.sqrt(variance + 1e-3)
    if with_offset_and_scale:
        want = want * scale + offset
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1]])
def test_l2_normalize(axis: Any) -> None:
    with pv.Graph().as_default():
        got = _run(pv.nn.l2_normalize(pv.constant(MATRIX), axis=axis))
        zeros = _run(pv.nn.l2_normalize(pv.constant([0.0, 0.0]), dim=0))
    axes = None if axis is None else tuple(np.atleast_1d(axis))
    want = MATRIX / np.sqrt(np.sum(MATRIX**2, axis=axes, keepdims=True))
    np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_array_equal(zeros, [0.0, 0.0])  # epsilon keeps 0 / 0 away


def test_sigmoid_cross_entropy_is_stable_for_large_logits() -> None:
    logits = np.array([-1000.0, -3.0, 0.0, 2.0, 1000.0])
    labels = np.array([0.0, 1.0, 0.5, 0.25, 1.0])
    with pv.Graph().as_default():
        loss = pv.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        assert loss.op.name == "logistic_loss"
        got = _run(loss)
    # -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)), written with log1p(exp(-|x|))
    log_sigmoid = -(np.maximum(-logits, 0) + np.log1p(np.exp(-np.abs(logits))))
    log_one_minus = -(np.maximum(logits, 0) + np.log1p(np.exp(-np.abs(logits))))
    np.testing.assert_allclose(got, -labels * log_sigmoid - (1 - labels) * log_one_minus)


# -- gradients ----------------------------------------------------------------------------------
def _away_from_kinks(*shape: int) -> np.ndarray:
    """Values at least 0.2 from 0 and from relu6's 6."""
    rng = np.random.default_rng(3)
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 5.5, shape) + rng.choice(
        [0.0, 7.0], shape
    ) * (rng.uniform(size=shape) > 0.8)


def _normal(*shape: int) -> np.ndarray:
    return np.random.default_rng(4).standard_normal(shape)


def _positive(*shape: int) -> np.ndarray:
    return np.random.default_rng(5).uniform(0.5, 3.0, shape)


def _moments_sum(x: pv.Tensor) -> pv.Tensor:
    mean, variance = pv.nn.moments(x, axes=[0])
    return mean * 3.0 + variance


def _normalized(x: pv.Tensor, offset: pv.Tensor, scale: pv.Tensor) -> pv.Tensor:
    mean, variance = pv.nn.moments(x, axes=[0], keepdims=True)
    return pv.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)


GRADIENT_CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray]]] = {
    "Rsqrt": (pv.rsqrt, [_positive(2, 3)]),
    "Log1p": (pv.log1p, [_positive(2, 3) - 0.4]),
    "Erf": (pv.erf, [_normal(2, 3)]),
    "Erfc": (pv.math.erfc, [_normal(2, 3)]),
    "Softplus": (pv.nn.softplus, [_normal(2, 3) * 3]),
    "Elu": (pv.nn.elu, [_away_from_kinks(3, 4)]),
    "Selu": (pv.nn.selu, [_away_from_kinks(3, 4)]),
    "Relu6": (pv.nn.relu6, [_away_from_kinks(3, 4)]),
    "LeakyRelu": (lambda x: pv.nn.leaky_relu(x, alpha=0.3), [_away_from_kinks(3, 4)]),
    "SquaredDifference": (pv.squared_difference, [_normal(3, 1), _normal(1, 4)]),
    "Gelu": (pv.nn.gelu, [_normal(2, 3) * 2]),
    "Gelu_approximate": (lambda x: pv.nn.gelu(x, approximate=True), [_normal(2, 3) * 2]),
    "sigmoid_cross_entropy": (
        lambda z, x: pv.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
        [_positive(2, 3) / 3, _away_from_kinks(2, 3)],
    ),
    "moments": (_moments_sum, [_normal(4, 3)]),
    "batch_normalization": (_normalized, [_normal(4, 3), _normal(3), _positive(3)]),
    "l2_normalize": (lambda x: pv.nn.l2_normalize(x, axis=1), [_normal(2, 3)]),
}


def _first_derivative(fn: Callable[[pv.Tensor], pv.Tensor]) -> Callable[[pv.Tensor], pv.Tensor]:
    """x -> d(sum(fn(x)²))/dx, whose own gradient needs the gradients of the fused gradient ops."""
    return lambda x: pv.gradients(pv.square(fn(x)), x)[0]


GRADIENT_CASES.update(
    {
        "EluGrad": (_first_derivative(pv.nn.elu), [_away_from_kinks(3, 4)]),
        "SeluGrad": (_first_derivative(pv.nn.selu), [_away_from_kinks(3, 4)]),
        "Relu6Grad": (_first_derivative(pv.nn.relu6), [_away_from_kinks(3, 4)]),
        "LeakyReluGrad": (_first_derivative(pv.nn.leaky_relu), [_away_from_kinks(3, 4)]),
        "RsqrtGrad": (_first_derivative(pv.rsqrt), [_positive(2, 3)]),
    }
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_gradient_matches_central_differences(case: str, mode: str) -> None:
    fn, values = GRADIENT_CASES[case]
    with pv.Graph().as_default():
        check_gradients(fn, values, mode)


def test_gradient_op_types_and_names_are_tensorflows() -> None:
    with pv.Graph().as_default() as graph:
        x = pv.constant([-1.0, 0.5, 7.0])
        ys = [pv.nn.elu(x), pv.nn.selu(x), pv.nn.relu6(x), pv.nn.leaky_relu(x), pv.rsqrt(x)]
        pv.gradients(ys, x)
        names = {op.name for op in graph.get_operations()}
    for grad in ("Elu_grad/EluGrad", "Selu_grad/SeluGrad", "Relu6_grad/Relu6Grad"):
        assert f"gradients/{grad}" in names
    assert "gradients/LeakyRelu_grad/LeakyReluGrad" in names
    assert "gradients/Rsqrt_grad/RsqrtGrad" in names


# -- errors and kernels -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda: pv.rsqrt(pv.constant([4])),
        lambda: pv.erf(pv.constant([1], pv.int64)),
        lambda: pv.log1p(pv.constant([1])),
        lambda: pv.nn.elu(pv.constant([1])),
        lambda: pv.nn.selu(pv.constant([1])),
        lambda: pv.nn.softplus(pv.constant([1])),
        lambda: pv.nn.relu6(pv.constant(["a"])),
    ],
)
def test_dtypes_without_kernels_are_type_errors(build: Callable[[], Any]) -> None:
    with pv.Graph().as_default(), pytest.raises(TypeError):
        build()


def test_errors_are_tensorflows() -> None:
    with pv.Graph().as_default():
        x = pv.constant([[1.0, 2.0]])
        with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
            pv.nn.moments(x, axes=[2])
        with pytest.raises(ValueError, match="Cannot specify both 'keep_dims' and 'keepdims'"):
            pv.nn.moments(x, axes=[0], keep_dims=True, keepdims=False)
        with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
            pv.nn.l2_normalize(x, axis=0, dim=1)
        with pytest.raises(ValueError, match="must be a floating point tensor"):
            pv.nn.gelu(pv.constant([1]))
        with pytest.raises(ValueError, match="must have the same shape"):
            pv.nn.sigmoid_cross_entropy_with_logits(labels=[1.0], logits=[1.0, 2.0])
        with pytest.raises(ValueError, match="Both `labels` and `logits` must be provided"):
            pv.nn.sigmoid_cross_entropy_with_logits(labels=[1.0])
        with pytest.raises(TypeError, match="Input 'y' of 'SquaredDifference' Op has type int32"):
            pv.squared_difference(x, pv.constant([1]))


def test_relu6_has_integer_kernels_on_cpus_only() -> None:
    relu6 = registry.get("Relu6")
    assert relu6.supports("CPU", pv.int32) and not relu6.supports("GPU", pv.int32)
    assert relu6.supports("GPU", pv.float16)
    assert not registry.get("Elu").supports("CPU", pv.int32)


def test_an_int_relu6_asked_for_a_gpu_stays_on_the_cpu_with_soft_placement() -> None:
    pv.config.simulate_gpus(1)  # the autouse fixture resets the devices afterwards
    with pv.Graph().as_default():
        with pv.device("/gpu:0"):
            ints = pv.nn.relu6(pv.constant([-1, 9]), name="ints")
            floats = pv.nn.relu6(pv.constant([-1.0, 9.0]), name="floats")
        config = pv.ConfigProto(allow_soft_placement=True)
        with pv.Session(config=config) as sess:
            got = sess.run([ints, floats])
            placement = dict(sess.placement)
    np.testing.assert_array_equal(got[0], [0, 6])
    assert placement["ints"].endswith("CPU:0")
    assert placement["floats"].endswith("GPU:0")
