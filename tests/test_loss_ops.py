"""pv.nn's fused losses, LogSoftmax, BiasAdd and stop_gradient: values and gradients.

The expected values were printed by TensorFlow 2.21 (tf.compat.v1, graph mode) for the same
inputs; gradients are also checked against finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import placeviz as pv

LOGITS = np.array([[1.0, 2.0, 3.0], [1.0, -1.0, 0.0]], np.float32)
LABELS = np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]], np.float32)


def _run(*fetches: object, feed: dict | None = None) -> list:
    with pv.Session(config=pv.ConfigProto(inter_op_parallelism_threads=1)) as sess:
        return sess.run(list(fetches), feed)


def test_dense_cross_entropy_and_its_gradients_match_tensorflow() -> None:
    logits = pv.placeholder(pv.float32, [None, 3], name="logits")
    labels = pv.placeholder(pv.float32, [None, 3], name="labels")
    loss = pv.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    # TF's: the op on the flattened logits and labels, its cost reshaped back (Reshape_2)
    core = loss.op.inputs[0].op
    assert (loss.op.name, loss.shape) == ("softmax_cross_entropy_with_logits/Reshape_2", [None])
    assert (core.type, core.name) == (
        "SoftmaxCrossEntropyWithLogits",
        "softmax_cross_entropy_with_logits",
    )
    d_logits, d_labels = pv.gradients(pv.reduce_sum(loss), [logits, labels])
    got = _run(loss, d_logits, d_labels, feed={logits: LOGITS, labels: LABELS})
    np.testing.assert_allclose(got[0], [0.40760595, 1.4076061], rtol=1e-6)
    np.testing.assert_allclose(
        got[1],
        [[0.09003057, 0.24472848, -0.33475906], [0.16524088, -0.40996945, 0.24472846]],
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        got[2], [[2.407606, 1.4076059, 0.40760595], [0.40760604, 2.4076061, 1.407606]], rtol=1e-5
    )


def test_the_v1_form_passes_no_gradient_to_its_labels() -> None:
    logits = pv.constant(LOGITS)
    labels = pv.constant(LABELS)
    loss = pv.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    core = loss.op.inputs[0].op
    assert core.name == "softmax_cross_entropy_with_logits_sg"
    flat_labels = core.inputs[1].op  # Reshape_1 of the held labels
    assert (
        flat_labels.inputs[0].op.name == "softmax_cross_entropy_with_logits_sg/labels_stop_gradient"
    )
    d_logits, d_labels = pv.gradients(pv.reduce_sum(loss), [logits, labels])
    assert d_labels is None
    np.testing.assert_allclose(_run(loss)[0], [0.40760595, 1.4076061], rtol=1e-6)
    assert d_logits is not None


def test_sparse_cross_entropy_matches_tensorflow_and_rejects_bad_labels() -> None:
    logits = pv.placeholder(pv.float32, [None, 3])
    labels = pv.placeholder(pv.int32, [None])
    loss = pv.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.op.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"
    (grad,) = pv.gradients(pv.reduce_sum(loss), [logits])
    got, d_logits = _run(loss, grad, feed={logits: LOGITS, labels: [2, 0]})
    np.testing.assert_allclose(got, [0.40760595, 0.40760604], rtol=1e-6)
    expected = np.exp(LOGITS) / np.exp(LOGITS).sum(axis=1, keepdims=True)
    expected[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(d_logits, expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(pv.errors.InvalidArgumentError, match="label value of 3"):
        _run(loss, feed={logits: LOGITS, labels: [3, 0]})


def test_log_softmax_and_bias_add_with_finite_difference_gradients() -> None:
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(4, 5))
    b0 = rng.normal(size=5)
    x = pv.placeholder(pv.float64, [4, 5])
    b = pv.placeholder(pv.float64, [5])
    weights = pv.constant(rng.normal(size=(4, 5)))
    y = pv.reduce_sum(pv.nn.log_softmax(pv.nn.bias_add(x, b)) * weights)
    assert pv.nn.bias_add(x, b).op.type == "BiasAdd"
    dx, db = pv.gradients(y, [x, b])

    def f(xv: np.ndarray, bv: np.ndarray) -> float:
        z = xv + bv
        z = z - z.max(axis=1, keepdims=True)
        log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float((log_probs * _run(weights)[0]).sum())

    value, gx, gb = _run(y, dx, db, feed={x: x0, b: b0})
    assert value == pytest.approx(f(x0, b0))
    eps = 1e-6
    numeric_x = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        bumped = x0.copy()
        bumped[idx] += eps
        numeric_x[idx] = (f(bumped, b0) - f(x0, b0)) / eps
    np.testing.assert_allclose(gx, numeric_x, atol=1e-4)
    np.testing.assert_allclose(gb, numeric_x.sum(axis=0), atol=1e-4)


def test_stop_gradient_blocks_gradients_and_passes_values() -> None:
    x = pv.constant([1.0, 2.0])
    y = pv.stop_gradient(x * 3.0)
    z = pv.reduce_sum(y * x)
    (grad,) = pv.gradients(z, [x])
    np.testing.assert_array_equal(_run(grad)[0], [3.0, 6.0])  # only through the second factor
    assert y.op.type == "StopGradient"


def test_a_training_step_with_the_fused_loss_lowers_it() -> None:
    rng = np.random.default_rng(1)
    x = pv.constant(rng.normal(size=(16, 4)).astype(np.float32))
    labels = pv.constant(rng.integers(0, 3, size=16).astype(np.int32))
    w = pv.Variable(np.zeros((4, 3), np.float32))
    b = pv.Variable(np.zeros(3, np.float32))
    loss = pv.reduce_mean(
        pv.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=pv.nn.bias_add(pv.matmul(x, w), b)
        )
    )
    train = pv.train.AdamOptimizer(0.1).minimize(loss)
    with pv.Session() as sess:
        sess.run(pv.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(20):
            sess.run(train)
        assert sess.run(loss) < first * 0.8
