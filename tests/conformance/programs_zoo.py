"""Conformance programs: the model zoo's whole training graphs (``placeviz.examples.zoo``), each
built on the CPU and run for one step. Every op's name, type, inputs, devices, colocation and
output shapes are compared; values are not (the weights start random), but for the LSTM
language model's programs below, which start from a fixed pattern."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Run, Runs, program
from placeviz.examples.zoo import ZOO

__all__: list[str] = []


def _one_step(name: str) -> Any:
    def build(tf: Any) -> Runs:
        model = ZOO[name](tf, gpus=0)
        return Runs(tf.global_variables_initializer(), Run(model.train_op, model.feed))

    return build


for _name in ZOO:
    program(_one_step(_name), name=f"zoo_{_name}", skip=("values",))


# The LSTM language model from a fixed pattern instead of random weights: its values after
# training steps are compared too.
def _lstm_pattern(tf: Any) -> Any:
    def initializer(shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        n = int(np.prod(shape))
        values = 0.1 * np.sin(np.arange(n) * 0.7 + n)
        return tf.constant(values.reshape(shape), dtype=dtype or tf.float32)

    return initializer


LSTM_SIZES = {"batch": 3, "steps": 4, "width": 5, "vocab": 11}


@program
def zoo_lstm_trained(tf: Any) -> Any:
    model = ZOO["lstm"](tf, gpus=0, initializer=_lstm_pattern(tf), **LSTM_SIZES)
    return Runs(
        tf.global_variables_initializer(),
        Run([model.train_op, model.loss], model.feed),
        Run([model.train_op, model.loss], model.feed),
        Run([model.loss, tf.trainable_variables()], model.feed),
    )


@program
def zoo_lstm_dynamic_trained(tf: Any) -> Any:
    """The same model looped by dynamic_rnn: its values after two steps are static_rnn's."""
    model = ZOO["lstm_dynamic"](tf, gpus=0, initializer=_lstm_pattern(tf), **LSTM_SIZES)
    return Runs(
        tf.global_variables_initializer(),
        Run([model.train_op, model.loss], model.feed),
        Run([model.train_op, model.loss], model.feed),
        Run([model.loss, tf.trainable_variables()], model.feed),
    )


@program
def zoo_lstm_four_layers_trained(tf: Any) -> Any:
    model = ZOO["lstm"](tf, gpus=0, layers=4, initializer=_lstm_pattern(tf), **LSTM_SIZES)
    return Runs(
        tf.global_variables_initializer(),
        Run(model.train_op, model.feed),
        Run([model.loss, tf.trainable_variables()], model.feed),
    )


@program(soft=True)
def zoo_lstm_layer_per_gpu_soft_placement(tf: Any) -> Any:
    """Each layer asks for its own GPU; a session without any puts them on the CPU."""
    model = ZOO["lstm"](tf, gpus=2, initializer=_lstm_pattern(tf), **LSTM_SIZES)
    return Runs(tf.global_variables_initializer(), Run([model.train_op, model.loss], model.feed))


@program(skip=("values",))
def zoo_lstm_variational_dropout(tf: Any) -> Any:
    """The model with each layer's output dropped, one mask per layer for every step."""
    model = ZOO["lstm"](tf, gpus=0, keep_prob=0.5, **LSTM_SIZES)
    return Runs(tf.global_variables_initializer(), Run(model.train_op, model.feed))
