"""Conformance programs: Keras layers in TF1 graph mode (issue 24, item 8).

TF's Keras layers make resource variables (``VarHandleOp``, ``ReadVariableOp``) where placeviz
makes ``VariableV2``, and decide training with a ``keras_learning_phase`` tensor and ``cond``
where placeviz decides when building, so programs whose layers have weights compare values,
notes and errors only; weightless layers compare the whole graph and its placement too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []

VALUES_ONLY = {"skip": ("graph", "assigned")}


def _t(tf: Any, *shape: int, fn: Any = np.sin, scale: float = 2.0) -> Any:
    """A deterministic float32 tensor of distinct values."""
    values = scale * fn(np.arange(np.prod(shape), dtype=np.float64)).reshape(shape)
    return tf.constant(values.astype(np.float32))


class _Pattern:
    """A deterministic initializer, ``scale * fn(0, 1, 2, ...)`` in the variable's shape, with
    the config Keras clones initializers by (MultiHeadAttention's projections)."""

    def __init__(self, fn: str = "cos", scale: float = 0.5) -> None:
        self.fn, self.scale = fn, scale

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        values = getattr(np, self.fn)(np.arange(int(np.prod(shape)), dtype=np.float64))
        return (self.scale * values).reshape(shape).astype(np.float32)

    def get_config(self) -> dict[str, Any]:
        return {"fn": self.fn, "scale": self.scale}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> _Pattern:
        return cls(**config)


def _init(fn: Any = np.cos, scale: float = 0.5) -> _Pattern:
    return _Pattern(fn.__name__, scale)


def _layer(build: Any, *shape: int) -> Any:
    """Run a layer made by ``build(tf)`` on a deterministic input; note its weights' names."""

    def run(tf: Any) -> Runs:
        layer = build(tf)
        y = layer(_t(tf, *shape))
        names = Note(weights=[w.name for w in layer.weights], shape=y.shape.as_list())
        return Runs(tf.global_variables_initializer(), Run(y), names)

    return run


def _activation(name: str) -> Any:
    return lambda tf: tf.keras.layers.Activation(name)(_t(tf, 2, 5))


# -- weightless layers: the whole graph -----------------------------------------------------------
family(
    "keras_activation",
    {
        name: _activation(name)
        for name in (
            "relu",
            "relu6",
            "elu",
            "selu",
            "softplus",
            "sigmoid",
            "tanh",
            "softmax",
            "gelu",
            "leaky_relu",
            "linear",
        )
    },
)
family(
    "keras_weightless",
    {
        "max_pooling": lambda tf: tf.keras.layers.MaxPooling2D(2)(_t(tf, 1, 4, 5, 2)),
        "average_pooling_same": lambda tf: tf.keras.layers.AveragePooling2D(
            3, strides=2, padding="same"
        )(_t(tf, 2, 5, 5, 1)),
        "flatten": lambda tf: tf.keras.layers.Flatten()(_t(tf, 2, 3, 2, 2)),
        "global_average_pooling": lambda tf: tf.keras.layers.GlobalAveragePooling2D()(
            _t(tf, 2, 3, 4, 3)
        ),
        "global_average_pooling_keepdims": lambda tf: tf.keras.layers.GlobalAveragePooling2D(
            keepdims=True
        )(_t(tf, 1, 2, 2, 3)),
    },
)


@program(cpus=2)
def keras_activation_on_cpu1(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        return tf.keras.layers.Activation("elu")(_t(tf, 3, 2))


@program
def keras_activation_gradient(tf: Any) -> Any:
    x = _t(tf, 2, 3)
    y = tf.keras.layers.Activation("selu")(x)
    return tf.gradients(tf.reduce_sum(y * y), x)


# -- errors ---------------------------------------------------------------------------------------
@program(error=("Unknown activation function", "swishy"))
def keras_error_unknown_activation(tf: Any) -> Any:
    return tf.keras.layers.Activation("swishy")


@program(error=("Invalid value 1.5 received for `rate`",))
def keras_error_dropout_rate(tf: Any) -> Any:
    return tf.keras.layers.Dropout(1.5)


@program(error=("`input_dim` and `output_dim` should be positive",))
def keras_error_embedding_dim(tf: Any) -> Any:
    return tf.keras.layers.Embedding(0, 2)


# -- layers with weights: values, weight names and output shapes ----------------------------------
family(
    "keras_layer",
    {
        "dense_ones": _layer(
            lambda tf: tf.keras.layers.Dense(3, kernel_initializer="ones", bias_initializer="ones"),
            2,
            4,
        ),
        "dense_relu": _layer(
            lambda tf: tf.keras.layers.Dense(3, activation="relu", kernel_initializer=_init()),
            2,
            4,
        ),
        "conv2d_ones": _layer(
            lambda tf: tf.keras.layers.Conv2D(2, 3, kernel_initializer="ones"), 1, 5, 5, 2
        ),
        "conv2d_same_strided": _layer(
            lambda tf: tf.keras.layers.Conv2D(
                3, 2, strides=2, padding="same", activation="tanh", kernel_initializer=_init()
            ),
            2,
            5,
            4,
            1,
        ),
        "batch_norm_inference": _layer(
            lambda tf: tf.keras.layers.BatchNormalization(
                moving_mean_initializer=_init(np.sin),
                moving_variance_initializer=_init(np.cos, 0.25),
                gamma_initializer=_init(),
            ),
            2,
            3,
            3,
            3,
        ),
        "batch_norm_rank2": _layer(
            lambda tf: tf.keras.layers.BatchNormalization(beta_initializer=_init()), 4, 3
        ),
        "layer_norm": _layer(
            lambda tf: tf.keras.layers.LayerNormalization(gamma_initializer=_init()), 3, 4
        ),
        "layer_norm_two_axes": _layer(
            lambda tf: tf.keras.layers.LayerNormalization(
                axis=[1, 2], beta_initializer=_init(np.sin)
            ),
            2,
            3,
            2,
        ),
    },
    **VALUES_ONLY,
)


@program(**VALUES_ONLY)
def keras_layer_batch_norm_training(tf: Any) -> Any:
    layer = tf.keras.layers.BatchNormalization(gamma_initializer=_init())
    return Runs(tf.global_variables_initializer(), layer(_t(tf, 4, 2, 2, 3), training=True))


@program(**VALUES_ONLY)
def keras_layer_embedding(tf: Any) -> Any:
    layer = tf.keras.layers.Embedding(6, 3, embeddings_initializer=_init())
    y = layer(tf.constant([[0, 5, 2], [2, 2, 1]]))
    names = Note(weights=[w.name for w in layer.weights], shape=y.shape.as_list())
    return Runs(tf.global_variables_initializer(), Run(y), names)


def _attention(build: Any, *shape: int) -> Any:
    """Self-attention of a layer made by ``build(tf)``; note its weights' names."""

    def run(tf: Any) -> Runs:
        layer = build(tf)
        x = _t(tf, *shape)
        y = layer(x, x)
        names = Note(weights=[w.name for w in layer.weights], shape=y.shape.as_list())
        return Runs(tf.global_variables_initializer(), Run(y), names)

    return run


family(
    "keras_layer",
    {
        "attention_self": _attention(
            lambda tf: tf.keras.layers.MultiHeadAttention(
                2, 3, kernel_initializer=_init(), bias_initializer=_init(np.sin, 0.1)
            ),
            2,
            3,
            4,
        ),
        "attention_sizes": _attention(
            lambda tf: tf.keras.layers.MultiHeadAttention(
                3, 2, value_dim=4, output_shape=5, kernel_initializer=_init(np.sin, 0.3)
            ),
            1,
            4,
            2,
        ),
    },
    **VALUES_ONLY,
)


@program(**VALUES_ONLY)
def keras_layer_attention_cross(tf: Any) -> Any:
    layer = tf.keras.layers.MultiHeadAttention(2, 2, kernel_initializer=_init(np.cos, 0.4))
    y = layer(_t(tf, 2, 3, 4), _t(tf, 2, 5, 3, fn=np.cos))
    return Runs(tf.global_variables_initializer(), Run(y))


@program(**VALUES_ONLY)
def keras_layer_dropout_inference(tf: Any) -> Any:
    return tf.keras.layers.Dropout(0.5)(_t(tf, 3, 4))


@program(**VALUES_ONLY)
def keras_layer_dropout_training(tf: Any) -> Any:
    """Random which, but every element is dropped or doubled."""
    x = _t(tf, 20, 30)
    y = tf.keras.layers.Dropout(0.5)(x, training=True)
    kept = tf.logical_or(tf.equal(y, 0.0), tf.equal(y, 2.0 * x))
    return tf.reduce_min(tf.cast(kept, tf.int32)), tf.shape(y)


@program(**VALUES_ONLY)
def keras_layer_norm_gradient(tf: Any) -> Any:
    x = _t(tf, 3, 4)
    y = tf.keras.layers.LayerNormalization(gamma_initializer=_init())(x)
    grads = tf.gradients(tf.reduce_sum(y * _t(tf, 3, 4, fn=np.cos)), x)
    return Runs(tf.global_variables_initializer(), Run(grads))


# -- Sequential models called on tensors ----------------------------------------------------------
@program(**VALUES_ONLY)
def keras_sequential_cnn(tf: Any) -> Any:
    layers = tf.keras.layers
    model = tf.keras.Sequential(
        [
            layers.Conv2D(2, 3, activation="relu", kernel_initializer=_init()),
            layers.BatchNormalization(),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(3, activation="softmax", kernel_initializer=_init(np.sin)),
        ]
    )
    y = model(_t(tf, 2, 6, 6, 1))
    names = Note(weights=[w.name for w in model.weights], shape=y.shape.as_list())
    return Runs(tf.global_variables_initializer(), Run(y), names)


@program(**VALUES_ONLY)
def keras_sequential_added(tf: Any) -> Any:
    model = tf.keras.Sequential()
    model.add(tf.keras.layers.Embedding(5, 4, embeddings_initializer=_init()))
    model.add(tf.keras.layers.LayerNormalization())
    model.add(tf.keras.layers.Dense(2, kernel_initializer="ones"))
    model.add(tf.keras.layers.Activation("gelu"))
    y = model(tf.constant([[1, 4], [0, 3]]))
    return Runs(tf.global_variables_initializer(), Run(y), Note(shape=y.shape.as_list()))


# -- whole graphs that differ (KNOWN_DIFFERENCES says why); their values are compared above -----
@program
def keras_graph_dense(tf: Any) -> Any:
    y = tf.keras.layers.Dense(2, kernel_initializer="ones")(_t(tf, 3, 4))
    return Runs(tf.global_variables_initializer(), Run(y))


@program
def keras_graph_dropout(tf: Any) -> Any:
    return tf.keras.layers.Dropout(0.5)(_t(tf, 3, 4))


# -- recurrent layers (tf_keras's v1 LSTM and GRU in graph mode: hard_sigmoid gates) ------------
def _recurrent(kind: str, **options: Any) -> Any:
    def run(tf: Any) -> Runs:
        layer = getattr(tf.keras.layers, kind)(
            3,
            kernel_initializer=_init(np.sin, 0.4),
            recurrent_initializer=_init(np.cos, 0.3),
            # tf_keras's LSTM concatenates its bias parts as tensors: a NumPy initializer fails
            bias_initializer=(
                tf.keras.initializers.Constant(0.3) if kind == "LSTM" else _init(np.cos, 0.2)
            ),
            **options,
        )
        out = layer(_t(tf, 2, 4, 5, scale=1.5))
        outs = out if isinstance(out, list) else [out]
        names = Note(
            weights=[w.name for w in layer.weights], shapes=[o.shape.as_list() for o in outs]
        )
        return Runs(tf.global_variables_initializer(), Run(outs), names)

    return run


def _recurrent_trained(kind: str, **options: Any) -> Any:
    def run(tf: Any) -> Runs:
        layer = getattr(tf.keras.layers, kind)(
            3,
            kernel_initializer=_init(np.sin, 0.4),
            recurrent_initializer=_init(np.cos, 0.3),
            return_sequences=True,
            **options,
        )
        y = layer(_t(tf, 2, 4, 5, scale=1.5))
        loss = tf.reduce_mean(tf.square(y - 0.25))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        return Runs(tf.global_variables_initializer(), train, train, Run([loss, y]))

    return run


family(
    "keras_layer_recurrent",
    {
        **{
            f"{kind.lower()}{suffix}": _recurrent(kind, **options)
            for kind in ("SimpleRNN", "GRU", "LSTM")
            for suffix, options in (
                ("", {}),
                ("_sequences_state", {"return_sequences": True, "return_state": True}),
                ("_backwards", {"go_backwards": True, "return_sequences": True}),
                ("_unroll", {"unroll": True, "return_state": True}),
            )
        },
        "lstm_no_forget_bias": _recurrent("LSTM", unit_forget_bias=False),
        "gru_relu": _recurrent("GRU", activation="relu", recurrent_activation="sigmoid"),
        "simple_rnn_no_bias": _recurrent("SimpleRNN", use_bias=False),
        **{
            f"{kind.lower()}_trained": _recurrent_trained(kind)
            for kind in ("SimpleRNN", "GRU", "LSTM")
        },
        "lstm_trained_unrolled": _recurrent_trained("LSTM", unroll=True),
    },
    **VALUES_ONLY,
)
