"""Keras layers, Sequential and fit: forward values against NumPy references, Dropout and
BatchNormalization in fit against predict, and a CNN trained mirrored on two simulated GPUs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import placeviz as pv

K = pv.keras.layers
LOCAL = "/job:localhost/replica:0/task:0/device:"
RNG = np.random.default_rng(7)


def _run(outputs: Any, feed: dict[Any, Any] | None = None) -> Any:
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    return sess.run(outputs, feed)


def _erf(x: np.ndarray) -> np.ndarray:
    from math import erf

    return np.vectorize(erf)(x)


_REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softmax": lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
    "gelu": lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.2 * x),
    "linear": lambda x: x,
}


@pytest.mark.parametrize("name", sorted(_REFERENCES))
def test_activation_layer_matches_numpy(name: str) -> None:
    x = RNG.normal(scale=3, size=(4, 5)).astype(np.float32)
    y = _run(K.Activation(name)(pv.constant(x)))
    np.testing.assert_allclose(y, _REFERENCES[name](x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_global_average_pooling_is_the_spatial_mean() -> None:
    x = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(
        _run(K.GlobalAveragePooling2D()(pv.constant(x))), x.mean(axis=(1, 2)), rtol=1e-6
    )
    first = _run(K.GlobalAveragePooling2D("channels_first", keepdims=True)(pv.constant(x)))
    np.testing.assert_allclose(first, x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)


def test_layer_normalization_normalizes_each_example() -> None:
    x = RNG.normal(loc=2, scale=3, size=(4, 6)).astype(np.float32)
    gamma = pv.constant_initializer(RNG.normal(size=6).astype(np.float32))
    layer = K.LayerNormalization(gamma_initializer=gamma, beta_initializer="ones")
    y = _run(layer(pv.constant(x)))
    g = _run(layer.gamma)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-3) * g + 1, rtol=1e-4, atol=1e-5)
    assert [v.op.name for v in layer.weights] == [
        "layer_normalization/gamma",
        "layer_normalization/beta",
    ]


def test_embedding_looks_up_rows_and_starts_within_keras_uniform_bounds() -> None:
    ids = np.array([[0, 3, 3], [4, 1, 0]], np.int32)
    layer = K.Embedding(5, 2)
    out = layer(pv.constant(ids))
    table, y = _run([layer.embeddings, out])
    assert out.shape.as_list() == [2, 3, 2]
    np.testing.assert_array_equal(y, table[ids])
    assert np.abs(table).max() <= 0.05 and table.std() > 0
    with pytest.raises(ValueError, match="positive"):
        K.Embedding(0, 2)


def _attention_reference(q: np.ndarray, v: np.ndarray, w: dict[str, Any], key_dim: int) -> Any:
    def project(name: str, x: np.ndarray) -> np.ndarray:
        kernel, bias = w[name]
        return np.einsum("btf,fhd->bthd", x, kernel) + bias

    query = project("query", q) / np.sqrt(key_dim)
    key, value = project("key", v), project("value", v)
    scores = np.einsum("bthd,bshd->bhts", query, key)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    heads = np.einsum("bhts,bshd->bthd", probs, value)
    kernel, bias = w["attention_output"]
    return np.einsum("bthd,hdo->bto", heads, kernel) + bias


def test_multi_head_attention_matches_numpy_with_the_same_weights() -> None:
    q = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    v = RNG.normal(size=(2, 5, 6)).astype(np.float32)
    layer = K.MultiHeadAttention(num_heads=2, key_dim=3, bias_initializer="glorot_uniform")
    out = layer(pv.constant(q), pv.constant(v))
    assert out.shape.as_list() == [2, 3, 4]
    names = [w.op.name for w in layer.weights]
    assert names == [
        f"multi_head_attention/{p}/{k}"
        for p in ("query", "key", "value", "attention_output")
        for k in ("kernel", "bias")
    ]
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    y, weights = sess.run([out, layer.projections])
    np.testing.assert_allclose(y, _attention_reference(q, v, weights, 3), rtol=1e-4, atol=1e-5)
    own = K.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=5, output_shape=7)
    out = own(pv.constant(q), pv.constant(q))
    sess.run(pv.variables_initializer(own.weights))
    y, weights = sess.run([out, own.projections])
    assert weights["value"][0].shape == (4, 3, 5) and y.shape == (2, 3, 7)
    np.testing.assert_allclose(y, _attention_reference(q, q, weights, 2), rtol=1e-4, atol=1e-5)


def _identity_model(layer: pv.keras.layers.Layer) -> pv.keras.Sequential:
    model = pv.keras.Sequential([layer, K.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=pv.keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    return model


def test_dropout_is_active_in_fit_and_the_identity_in_predict_and_evaluate() -> None:
    x = np.ones((200, 50), np.float32)
    model = _identity_model(K.Dropout(0.5))
    np.testing.assert_allclose(model.predict(x), np.full((200, 1), 50.0))
    assert model.evaluate(x, np.full((200, 1), 50.0)) == pytest.approx(0.0)
    # In training half the inputs are dropped and the rest doubled: the sum's variance is 50 * 1.
    loss = model.fit(x, np.full((200, 1), 50.0), batch_size=200, verbose=0).history["loss"][0]
    assert 25 < loss < 100


def test_dropout_called_with_training_drops_and_scales() -> None:
    x = np.ones((100, 100), np.float32)
    layer = K.Dropout(0.25)
    dropped, same = _run([layer(pv.constant(x), training=True), layer(pv.constant(x))])
    assert set(np.unique(dropped)) == {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (dropped == 0).mean() < 0.3
    np.testing.assert_array_equal(same, x)


def test_batch_normalization_uses_batch_statistics_in_fit_and_moving_ones_in_predict() -> None:
    x = RNG.normal(loc=3.0, scale=2.0, size=(64, 4)).astype(np.float32)
    bn = K.BatchNormalization(momentum=0.5)
    model = pv.keras.Sequential([bn])
    model.compile(optimizer=pv.keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    # predict: moving mean 0 and variance 1 at first, so the layer is x / sqrt(1 + eps).
    np.testing.assert_allclose(model.predict(x), x / np.sqrt(1 + 1e-3), rtol=1e-5)
    # fit on the normalized batch as target: a zero loss only with the batch's statistics.
    target = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
    loss = model.fit(x, target, batch_size=64, epochs=2, shuffle=False, verbose=0)
    assert max(loss.history["loss"]) < 1e-6
    sess = pv.keras.backend.get_session()
    mean, var = sess.run([bn.moving_mean, bn.moving_variance])
    # Two updates of momentum 0.5 from (0, 1); a rank-2 batch is not fused: biased variance.
    np.testing.assert_allclose(mean, 0.75 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var, 0.25 + 0.75 * x.var(0), rtol=1e-5)


def test_sequential_add_build_summary_and_a_first_input() -> None:
    model = pv.keras.Sequential(name="stack")
    model.add(K.Dense(3, kernel_initializer="ones"))
    model.add(K.Activation("relu"))
    model.build((None, 2))
    assert model.outputs.shape.as_list() == [None, 3]
    lines: list[str] = []
    model.summary(print_fn=lines.append)
    assert lines[0] == 'Model: "stack"' and lines[-1] == "Total params: 9"
    np.testing.assert_allclose(model.predict([[1.0, -3.0]]), [[0.0, 0.0, 0.0]])
    with_input = pv.keras.Sequential([K.Input(shape=(2,)), K.Dense(2)])
    assert with_input.outputs.shape.as_list() == [None, 2]
    with pytest.raises(TypeError, match="instance of class Layer"):
        model.add("dense")


def test_cnn_layers_in_a_functional_model() -> None:
    inputs = K.Input(shape=(6, 6, 1))
    h = K.Conv2D(2, 3, kernel_initializer="ones", padding="same")(inputs)
    h = K.AveragePooling2D(2)(h)
    h = K.MaxPooling2D(3)(h)
    outputs = K.Dense(1, kernel_initializer="ones")(K.Flatten()(h))
    model = pv.keras.Model(inputs, outputs)
    x = np.arange(36, dtype=np.float32).reshape(1, 6, 6, 1)
    window = np.pad(x[0, :, :, 0], 1)
    conv = sum(window[i : i + 6, j : j + 6] for i in range(3) for j in range(3))
    pooled = conv.reshape(3, 2, 3, 2).mean(axis=(1, 3)).max()
    np.testing.assert_allclose(model.predict(x), [[2 * pooled]], rtol=1e-6)


def test_a_sequential_cnn_trains_mirrored_on_two_gpus() -> None:
    pv.config.simulate_gpus(2)
    # A seeded start: some random ones trained slowly (a clean-clone CI run's lost only 10%)
    pv.set_random_seed(0)
    strategy = pv.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 2
    with strategy.scope():
        model = pv.keras.Sequential(
            [
                K.Conv2D(4, 3, activation="relu"),
                K.BatchNormalization(),
                K.MaxPooling2D(2),
                K.Flatten(),
                K.Dropout(0.2),
                K.Dense(2, activation="softmax"),
            ]
        )
        model.compile(optimizer=pv.keras.optimizers.SGD(learning_rate=0.5), loss="mse")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, 8, 8, 1)).astype(np.float32)
    labels = (x[:, :4].mean(axis=(1, 2, 3)) > x[:, 4:].mean(axis=(1, 2, 3))).astype(int)
    history = model.fit(x, np.eye(2, dtype=np.float32)[labels], batch_size=32, epochs=8, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.7 * losses[0]
    probabilities = model.predict(x[:5])
    np.testing.assert_allclose(probabilities.sum(axis=1), np.ones(5), rtol=1e-5)
    assert model.evaluate(x, np.eye(2, dtype=np.float32)[labels]) < losses[0]
    placement = pv.keras.backend.get_session().placement
    conv = model.layers[0].kernel
    assert {placement[k.op.name] for k in conv.values} == {f"{LOCAL}GPU:0", f"{LOCAL}GPU:1"}
    replicated = {placement[op] for op in placement if op.endswith("Conv2D")}
    assert replicated == {f"{LOCAL}GPU:0", f"{LOCAL}GPU:1"}
    # Each replica moved its own copy of the moving mean toward its own batches' means.
    sess = pv.keras.backend.get_session()
    copies = sess.run(list(model.layers[1].moving_mean.values))
    assert all(np.abs(copy).max() > 0 for copy in copies)


def test_a_sequential_model_trains_in_eager_mode() -> None:
    pv.enable_eager_execution()
    pv.set_random_seed(0)  # the initial weights and dropout masks: unseeded, 1 run in 5 failed
    model = pv.keras.Sequential(
        [K.Dense(8, activation="gelu"), K.LayerNormalization(), K.Dropout(0.1), K.Dense(1)]
    )
    model.compile(optimizer=pv.keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    x = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    losses = model.fit(x, y, epochs=20, verbose=0).history["loss"]
    assert losses[-1] < 0.3 * losses[0]
    assert model.evaluate(x, y) < losses[0]
    assert model.predict(x[:2]).shape == (2, 1)


def test_crossentropy_losses_by_name_match_keras_formula() -> None:
    """Keras's from-probabilities losses: clipped to [1e-7, 1 - 1e-7], then -log of the true
    class's (renormalized) probability."""
    probs = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]], np.float32)
    labels = np.array([0, 1])
    one_hot = np.eye(3, dtype=np.float32)[labels]
    clipped = np.clip(probs / probs.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    want = -np.log(clipped[np.arange(2), labels])
    with pv.Graph().as_default():
        dense = pv.keras.losses.get("categorical_crossentropy")(
            pv.constant(one_hot), pv.constant(probs)
        )
        sparse = pv.keras.losses.get("sparse_categorical_crossentropy")(
            pv.constant(labels.reshape(2, 1)), pv.constant(probs)
        )
        with pv.Session() as sess:
            got_dense, got_sparse = sess.run([dense, sparse])
    np.testing.assert_allclose(got_dense, want, rtol=1e-6)
    np.testing.assert_allclose(got_sparse, want, rtol=1e-5)


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (K.Dense, ["dense/MatMul", "dense_1/MatMul"]),
        (pv.layers.Dense, ["dense/MatMul", "dense/MatMul_1"]),
    ],
)
def test_a_keras_layer_called_again_opens_a_new_name_scope_where_tf_layers_reenter(
    make: Any, names: list[str]
) -> None:
    """As TF 2.21 (tf_keras) names a Dense called twice in a fresh graph, one set of
    variables either way."""
    with pv.Graph().as_default() as graph:
        x = pv.ones([2, 3])
        dense = make(2)
        dense(x)
        dense(x)
        assert [op.name for op in graph.get_operations() if op.type == "MatMul"] == names
        assert [v.name for v in pv.global_variables()] == ["dense/kernel:0", "dense/bias:0"]


def _wave(shape: Any, dtype: Any = None, **_: Any) -> np.ndarray:
    """A deterministic initializer (no random stream), as the conformance programs use."""
    return (0.3 * np.cos(np.arange(int(np.prod(shape))))).reshape(shape).astype(np.float32)


def test_keras_recurrent_layers_train_in_a_sequential_model() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((8, 5, 3), dtype=np.float32)
    y = rng.random((8, 1), dtype=np.float32)
    for layer in (pv.keras.layers.LSTM, pv.keras.layers.GRU, pv.keras.layers.SimpleRNN):
        with pv.Graph().as_default():
            recurrent = layer(4, kernel_initializer=_wave, recurrent_initializer=_wave)
            dense = pv.keras.layers.Dense(1, kernel_initializer=_wave)
            model = pv.keras.Sequential([recurrent, dense])
            model.compile(optimizer=pv.keras.optimizers.SGD(0.1), loss="mse")
            history = model.fit(x, y, epochs=5, batch_size=8, verbose=0)
            losses = history.history["loss"]
            assert losses[-1] < losses[0], layer.__name__
            assert model.predict(x[:2]).shape == (2, 1)


@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [2, 3, 5]])
def test_the_orthogonal_initializer_makes_orthonormal_rows_or_columns(shape: list[int]) -> None:
    with pv.Graph().as_default():
        value = pv.keras.initializers.Orthogonal(gain=2.0)(shape)
        with pv.Session() as sess:
            matrix = sess.run(value).reshape(-1, shape[-1]) / 2.0
    small = min(matrix.shape)
    product = matrix.T @ matrix if matrix.shape[0] >= matrix.shape[1] else matrix @ matrix.T
    np.testing.assert_allclose(product, np.eye(small), atol=1e-5)
