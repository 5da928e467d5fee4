"""Fused batch norm (FusedBatchNormV3 and its gradient) and tf.layers.batch_normalization,
against NumPy references computed here in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz.graph import registry

EPSILON = 0.001
RNG = np.random.RandomState(7)
NHWC = (RNG.randn(3, 2, 5, 4) * 1.5 + 0.5).astype(np.float32)
WEIGHTS = RNG.randn(3, 2, 5, 4).astype(np.float32)
SCALE = np.array([1.0, 2.0, 0.5, -1.5], np.float32)
OFFSET = np.array([0.0, 0.1, -0.2, 0.3], np.float32)
MEAN = np.array([0.5, -0.5, 1.0, 0.0], np.float32)
VARIANCE = np.array([2.0, 1.0, 0.5, 4.0], np.float32)

# data format -> (channel axis, how an NHWC batch is laid out in it)
FORMATS: dict[str, tuple[int, Any]] = {
    "NHWC": (3, lambda a: a),
    "NCHW": (1, lambda a: a.transpose(0, 3, 1, 2)),
    "NDHWC": (4, lambda a: a.reshape(3, 2, 5, 1, 4)),
    "NCDHW": (1, lambda a: a.reshape(3, 2, 5, 1, 4).transpose(0, 4, 1, 2, 3)),
}


def reference(
    x: np.ndarray,
    channel: int,
    training: bool,
    scale: np.ndarray = SCALE,
    offset: np.ndarray = OFFSET,
    mean: np.ndarray = MEAN,
    variance: np.ndarray = VARIANCE,
    factor: float = 1.0,
    epsilon: float = EPSILON,
) -> dict[str, np.ndarray]:
    """Batch norm in float64: y, the running statistics and the batch's (biased) ones."""
    values = np.asarray(x, np.float64)
    axes = tuple(a for a in range(values.ndim) if a != channel)
    shape = [1] * values.ndim
    shape[channel] = -1
    if training:
        batch_mean = values.mean(axis=axes)
        batch_variance = values.var(axis=axes)
        count = values.size // values.shape[channel]
        unbiased = batch_variance * count / max(count - 1, 1)
        running_mean = (1 - factor) * mean + factor * batch_mean
        running_variance = (1 - factor) * variance + factor * unbiased
    else:
        batch_mean, batch_variance = mean.astype(np.float64), variance.astype(np.float64)
        running_mean, running_variance = batch_mean, batch_variance
    normalized = (values - batch_mean.reshape(shape)) / np.sqrt(
        batch_variance.reshape(shape) + epsilon
    )
    y = normalized * scale.reshape(shape) + offset.reshape(shape)
    return {
        "y": y,
        "running_mean": running_mean,
        "running_variance": running_variance,
        "batch_mean": batch_mean,
        "batch_variance": batch_variance,
    }


def _run(fetches: Any, feed: dict[Any, Any] | None = None) -> Any:
    with pv.Session() as sess:
        return sess.run(fetches, feed_dict=feed)


# -- the op's values ---------------------------------------------------------------------------
@pytest.mark.parametrize("data_format", list(FORMATS))
def test_training_normalizes_with_the_batch_statistics(data_format: str) -> None:
    channel, layout = FORMATS[data_format]
    batch = np.ascontiguousarray(layout(NHWC))
    x = pv.placeholder(pv.float32, batch.shape)
    y, _, _ = pv.nn.fused_batch_norm(x, SCALE, OFFSET, data_format=data_format)
    got = _run(list(y.op.outputs), {x: batch})
    want = reference(batch, channel, training=True)
    names = ["y", "running_mean", "running_variance", "batch_mean", "batch_variance"]
    for value, name in zip(got, names):
        np.testing.assert_allclose(value, want[name], rtol=1e-5, atol=1e-5, err_msg=name)
        assert value.dtype == np.float32
    assert got[5].shape == (0,)


def test_the_running_variance_is_unbiased_and_the_saved_one_biased() -> None:
    x = pv.constant(NHWC)
    _, _, variance = pv.nn.fused_batch_norm(x, SCALE, OFFSET)
    running, saved = _run([variance, variance.op.outputs[4]])
    count = NHWC.size // 4
    np.testing.assert_allclose(running, saved * count / (count - 1), rtol=1e-6)
    np.testing.assert_allclose(saved, NHWC.astype(np.float64).var(axis=(0, 1, 2)), rtol=1e-5)


@pytest.mark.parametrize("data_format", list(FORMATS))
def test_inference_normalizes_with_the_given_statistics(data_format: str) -> None:
    channel, layout = FORMATS[data_format]
    batch = np.ascontiguousarray(layout(NHWC))
    y, mean, variance = pv.nn.fused_batch_norm(
        batch, SCALE, OFFSET, MEAN, VARIANCE, is_training=False, data_format=data_format
    )
    got = _run([y, mean, variance])
    want = reference(batch, channel, training=False)
    np.testing.assert_allclose(got[0], want["y"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], MEAN)
    np.testing.assert_array_equal(got[2], VARIANCE)


def test_exponential_avg_factor_averages_into_the_given_statistics() -> None:
    outputs = pv.nn.fused_batch_norm(
        NHWC, SCALE, OFFSET, MEAN, VARIANCE, epsilon=0.01, exponential_avg_factor=0.3
    )
    got = _run(list(outputs))
    want = reference(NHWC, 3, training=True, factor=0.3, epsilon=0.01)
    for value, name in zip(got, ["y", "running_mean", "running_variance"]):
        np.testing.assert_allclose(value, want[name], rtol=1e-5, atol=1e-5, err_msg=name)


def test_a_float16_batch_keeps_float32_statistics() -> None:
    batch = NHWC.astype(np.float16)
    y, mean, variance = pv.nn.fused_batch_norm(batch, SCALE, OFFSET)
    assert (y.dtype, mean.dtype, variance.dtype) == (pv.float16, pv.float32, pv.float32)
    got = _run([y, mean])
    want = reference(batch, 3, training=True)
    assert got[0].dtype == np.float16
    np.testing.assert_allclose(got[0], want["y"], rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got[1], want["running_mean"], rtol=1e-5)


def test_an_empty_batch_has_nan_statistics() -> None:
    x = pv.placeholder(pv.float32, [None, 2, 2, 4])
    y, mean, variance = pv.nn.fused_batch_norm(x, SCALE, OFFSET)
    got = _run([y, mean, variance], {x: np.zeros((0, 2, 2, 4), np.float32)})
    assert got[0].shape == (0, 2, 2, 4)
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all()


def test_the_op_as_tensorflow_builds_it() -> None:
    x = pv.placeholder(pv.float32, [None, 2, 5, 4], name="x")
    y, _, _ = pv.nn.fused_batch_norm(x, SCALE, OFFSET, MEAN, VARIANCE, is_training=False)
    op = y.op
    assert (op.type, op.name) == ("FusedBatchNormV3", "FusedBatchNormV3")
    assert [t.op.name for t in op.inputs] == [
        "x",
        "scale",
        "offset",
        "FusedBatchNormV3/mean",
        "FusedBatchNormV3/variance",
    ]
    assert [o.shape.dims for o in op.outputs] == [(None, 2, 5, 4), *[(4,)] * 4, None]
    assert op.attrs == {
        "epsilon": EPSILON,
        "exponential_avg_factor": 1.0,
        "data_format": "NHWC",
        "is_training": False,
    }


# -- the gradient ------------------------------------------------------------------------------
def _finite_differences(
    arguments: list[np.ndarray], weights: np.ndarray, **kwargs: Any
) -> list[np.ndarray]:
    """Central differences of the float64 reference's ``sum(y * weights)``, per element of
    x, scale and offset."""

    def loss(x: np.ndarray, scale: np.ndarray, offset: np.ndarray) -> float:
        return float((reference(x, scale=scale, offset=offset, **kwargs)["y"] * weights).sum())

    step = 1e-4
    found = []
    for index, argument in enumerate(arguments):
        grad = np.zeros(argument.shape)
        for position in np.ndindex(argument.shape):
            shifted = []
            for sign in (1, -1):
                moved = [a.astype(np.float64) for a in arguments]
                moved[index][position] += sign * step
                shifted.append(loss(*moved))
            grad[position] = (shifted[0] - shifted[1]) / (2 * step)
        found.append(grad)
    return found


@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_gradients_match_finite_differences(training: bool, data_format: str) -> None:
    channel, layout = FORMATS[data_format]
    batch = np.ascontiguousarray(layout(NHWC))
    weights = np.ascontiguousarray(layout(WEIGHTS))
    x = pv.placeholder(pv.float32, batch.shape)
    scale, offset = pv.constant(SCALE), pv.constant(OFFSET)
    statistics = {} if training else {"mean": MEAN, "variance": VARIANCE}
    y, _, _ = pv.nn.fused_batch_norm(
        x, scale, offset, is_training=training, data_format=data_format, **statistics
    )
    grads = pv.gradients(pv.reduce_sum(y * weights), [x, scale, offset])
    got = _run(grads, {x: batch})
    want = _finite_differences([batch, SCALE, OFFSET], weights, channel=channel, training=training)
    for value, expected, name in zip(got, want, ["x", "scale", "offset"]):
        np.testing.assert_allclose(value, expected, rtol=2e-3, atol=2e-3, err_msg=name)


def test_the_gradient_ops_tensorflow_builds() -> None:
    x = pv.placeholder(pv.float32, [3, 4, 2, 5], name="x")
    trained, _, _ = pv.nn.fused_batch_norm(x, SCALE, OFFSET, data_format="NCHW")
    frozen, _, _ = pv.nn.fused_batch_norm(
        x, SCALE, OFFSET, MEAN, VARIANCE, is_training=False, data_format="NCHW"
    )
    grads = pv.gradients([trained, frozen], [x])
    names = {op.name: op.type for op in pv.get_default_graph().get_operations()}
    prefix = "gradients/FusedBatchNormV3"
    assert names[f"{prefix}_grad/FusedBatchNormGradV3"] == "FusedBatchNormGradV3"
    grad_op = pv.get_default_graph().get_operation_by_name(f"{prefix}_grad/FusedBatchNormGradV3")
    assert [t.name for t in grad_op.inputs[3:]] == [f"FusedBatchNormV3:{i}" for i in (3, 4, 5)]
    assert grad_op.attrs["data_format"] == "NCHW" and grad_op.attrs["is_training"]
    # inference: TF's kernel takes channels-last data only, so the gradient transposes
    frozen_grad = f"{prefix}_1_grad/FusedBatchNormGradV3"
    assert pv.get_default_graph().get_operation_by_name(frozen_grad).attrs["data_format"] == (
        "NHWC"
    )
    transposes = [n for n in names if n.startswith(f"{prefix}_1_grad/transpose")]
    assert sorted(n for n in transposes if "/perm" not in n) == [
        f"{prefix}_1_grad/transpose",
        f"{prefix}_1_grad/transpose_1",
        f"{prefix}_1_grad/transpose_2",
    ]
    assert grads[0].shape.dims == (3, 4, 2, 5)


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: pv.nn.fused_batch_norm(NHWC[0], SCALE, OFFSET), "must be rank 4 but is rank 3"),
        (lambda: pv.nn.fused_batch_norm(NHWC, SCALE[:3], OFFSET), "but are 4 and 3"),
        (lambda: pv.nn.fused_batch_norm(NHWC, [SCALE], OFFSET), "must be rank 1 but is rank 2"),
        (
            lambda: pv.nn.fused_batch_norm(NHWC, SCALE, OFFSET, is_training=False),
            "Both `mean` and `variance` must be a 1D tensor",
        ),
        (
            lambda: pv.nn.fused_batch_norm(NHWC, SCALE, OFFSET, data_format="NWHC"),
            "passed string 'NWHC' not in",
        ),
    ],
)
def test_bad_shapes_and_attrs_fail_at_build_time(build: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        build()


def test_dtypes_tensorflow_has_no_kernel_for_fail_at_build_time() -> None:
    with pytest.raises(TypeError, match="parameter 'x' has DataType float64 not in list"):
        pv.nn.fused_batch_norm(NHWC.astype(np.float64), SCALE, OFFSET)
    with pytest.raises(TypeError, match="parameter 'scale' has DataType float16"):
        pv.nn.fused_batch_norm(NHWC, SCALE.astype(np.float16), OFFSET)
    with pytest.raises(TypeError, match="Input 'offset' of 'FusedBatchNormV3' Op has type"):
        pv.nn.fused_batch_norm(NHWC, SCALE, pv.constant(OFFSET, dtype=pv.float16))


def test_a_scale_of_the_wrong_size_fails_when_the_op_runs() -> None:
    scale = pv.placeholder(pv.float32, [None])
    y, _, _ = pv.nn.fused_batch_norm(NHWC, scale, OFFSET)
    with pytest.raises(pv.errors.InvalidArgumentError, match="got 3 and 4"):
        _run(y, {scale: SCALE[:3]})


def test_training_ignores_statistics_it_does_not_read() -> None:
    y, _, _ = pv.nn.fused_batch_norm(NHWC, SCALE, OFFSET, MEAN[:3], VARIANCE[:3])
    np.testing.assert_allclose(_run(y), reference(NHWC, 3, True)["y"], rtol=1e-5, atol=1e-5)


# -- placement ---------------------------------------------------------------------------------
def test_kernels_are_registered_for_float16_and_float32_only() -> None:
    for op_type in ("FusedBatchNormV3", "FusedBatchNormGradV3"):
        op_def = registry.get(op_type)
        for device_type in ("CPU", "GPU"):
            assert op_def.supports(device_type, pv.float32)
            assert op_def.supports(device_type, pv.float16)
            assert not op_def.supports(device_type, pv.float64)


def test_the_op_and_its_gradient_run_on_a_gpu() -> None:
    pv.config.simulate_gpus(1)  # the autouse fixture resets the devices afterwards
    x = pv.constant(NHWC)
    with pv.device("/gpu:0"):
        y, _, _ = pv.nn.fused_batch_norm(x, SCALE, OFFSET)
    (grad,) = pv.gradients(pv.reduce_sum(y * WEIGHTS), [x])
    with pv.Session() as sess:
        value = sess.run(y)
        placement = dict(sess.placement)
    assert placement["FusedBatchNormV3"].endswith("GPU:0")
    np.testing.assert_allclose(value, reference(NHWC, 3, True)["y"], rtol=1e-5, atol=1e-5)
    assert grad.op.type == "FusedBatchNormGradV3"


# -- tf.layers.batch_normalization -------------------------------------------------------------
def _update_ops() -> list[Any]:
    return pv.get_collection(pv.GraphKeys.UPDATE_OPS)


def test_the_layer_makes_tensorflows_variables_and_update_ops() -> None:
    x = pv.placeholder(pv.float32, [None, 2, 5, 4])
    y = pv.layers.batch_normalization(x, training=True)
    assert y.op.type == "FusedBatchNormV3" and y.op.name == "batch_normalization/FusedBatchNormV3"
    names = ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [v.name for v in pv.global_variables()] == [f"batch_normalization/{n}:0" for n in names]
    assert [v.name for v in pv.trainable_variables()] == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
    ]
    assert [(op.name, op.type) for op in _update_ops()] == [
        ("batch_normalization/AssignMovingAvg", "AssignSub"),
        ("batch_normalization/AssignMovingAvg_1", "AssignSub"),
    ]
    pv.layers.batch_normalization(x, training=False, name="frozen")
    assert len(_update_ops()) == 2  # inference moves no statistics


def test_the_class_reports_its_variables_and_updates() -> None:
    layer = pv.layers.BatchNormalization(center=False, name="norm")
    layer(pv.placeholder(pv.float32, [2, 3]), training=True)
    assert [v.name for v in layer.trainable_variables] == ["norm/gamma:0"]
    assert [v.name for v in layer.non_trainable_variables] == [
        "norm/moving_mean:0",
        "norm/moving_variance:0",
    ]
    assert [op.name for op in layer.updates] == [op.name for op in _update_ops()]


def _training_loop(batches: list[np.ndarray], **kwargs: Any) -> tuple[Any, Any]:
    """Train with the update ops as the train op's control dependencies; return the moving
    statistics after all batches."""
    x = pv.placeholder(pv.float32, batches[0].shape)
    y = pv.layers.batch_normalization(x, training=True, momentum=0.8, **kwargs)
    loss = pv.reduce_sum(y * y)
    with pv.control_dependencies(_update_ops()):
        train_op = pv.train.GradientDescentOptimizer(0.01).minimize(loss)
    moving = [v for v in pv.global_variables() if "moving" in v.name]
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        for batch in batches:
            sess.run(train_op, feed_dict={x: batch})
        return tuple(sess.run(moving))


def _expected_moving(
    batches: list[np.ndarray], axes: tuple[int, ...], unbiased: bool
) -> tuple[np.ndarray, np.ndarray]:
    mean, variance = np.zeros(4), np.ones(4)
    for batch in batches:
        count = batch.size // 4
        batch_variance = batch.var(axis=axes) * (count / (count - 1) if unbiased else 1.0)
        mean = mean * 0.8 + batch.mean(axis=axes) * 0.2
        variance = variance * 0.8 + batch_variance * 0.2
    return mean, variance


def test_fused_moving_statistics_follow_the_unbiased_batch_variance() -> None:
    batches = [NHWC * (k + 1) - k for k in range(4)]
    got = _training_loop(batches)
    want = _expected_moving(batches, (0, 1, 2), unbiased=True)
    for value, expected in zip(got, want):
        np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_row_moving_statistics_follow_the_biased_batch_variance() -> None:
    rows = [NHWC.reshape(-1, 4)[:7] * (k + 1) for k in range(3)]
    got = _training_loop(rows)
    want = _expected_moving(rows, (0,), unbiased=False)
    for value, expected in zip(got, want):
        np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_inference_normalizes_with_the_moving_statistics() -> None:
    x = pv.placeholder(pv.float32, NHWC.shape)
    y = pv.layers.batch_normalization(x, epsilon=0.01, training=False)
    values = (SCALE, OFFSET, MEAN, VARIANCE)  # gamma, beta, moving mean and variance
    assigned = [pv.assign(v, value) for v, value in zip(pv.global_variables(), values)]
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        sess.run(assigned)
        got = sess.run(y, feed_dict={x: NHWC})
    want = reference(NHWC, 3, training=False, epsilon=0.01)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_float16_layer_keeps_float32_variables() -> None:
    y = pv.layers.batch_normalization(NHWC.astype(np.float16), training=True)
    assert y.dtype == pv.float16
    assert {v.dtype.base_dtype for v in pv.global_variables()} == {pv.float32}


def test_a_training_tensor_known_when_built_counts_as_its_value() -> None:
    y = pv.layers.batch_normalization(NHWC, training=pv.constant(True))
    assert y.op.attrs["is_training"] and len(_update_ops()) == 2


def test_a_fed_training_tensor_names_the_missing_control_flow() -> None:
    with pytest.raises(NotImplementedError, match="Switch and Merge"):
        pv.layers.batch_normalization(NHWC, training=pv.placeholder(pv.bool, []))


def test_unimplemented_arguments_are_refused_by_name() -> None:
    pv.layers.BatchNormalization(renorm=False, virtual_batch_size=None)  # off: accepted
    with pytest.raises(NotImplementedError, match="`renorm`"):
        pv.layers.BatchNormalization(renorm=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        pv.layers.BatchNormalization(bogus=1)


@pytest.mark.parametrize(
    ("shape", "axis", "words"),
    [
        ([2, 3, None], -1, "Input has undefined `axis` dimension"),
        ([2, 3], 2, "Invalid value for `axis` argument"),
        ([2, 3], [1, -1], "Duplicate axis"),
    ],
)
def test_bad_axes_fail_when_the_layer_is_built(shape: list[Any], axis: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        pv.layers.batch_normalization(pv.placeholder(pv.float32, shape), axis=axis)


@pytest.mark.gpu
def test_cupy_kernels_match_numpy() -> None:
    """The same xp code on a real GPU: forward and gradient, both modes, float16 and NCHW."""
    pv.config.reset_devices()
    batch = np.ascontiguousarray(NHWC.transpose(0, 3, 1, 2))
    fed = [batch, batch.astype(np.float16)]
    fetches = []
    for array in fed:
        x = pv.constant(array)
        with pv.device("/gpu:0"):
            trained = pv.nn.fused_batch_norm(x, SCALE, OFFSET, data_format="NCHW")
            frozen = pv.nn.fused_batch_norm(
                x, SCALE, OFFSET, MEAN, VARIANCE, is_training=False, data_format="NCHW"
            )
            loss = pv.reduce_sum(pv.cast(trained[0] + frozen[0], pv.float32))
            fetches.append([*trained, frozen[0], *pv.gradients(loss, [x])])
    got = _run(fetches)
    for values, array, tolerance in zip(got, fed, (1e-5, 2e-3)):
        want = reference(array, 1, training=True)
        np.testing.assert_allclose(values[0], want["y"], rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(values[2], want["running_variance"], rtol=1e-5)
        frozen_want = reference(array, 1, training=False)["y"]
        np.testing.assert_allclose(values[3], frozen_want, rtol=tolerance, atol=tolerance)
        assert values[4].shape == batch.shape and values[4].dtype == array.dtype
