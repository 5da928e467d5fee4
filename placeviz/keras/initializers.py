"""``tf.compat.v1.keras.initializers``: TF1's initializers under Keras's names, with Keras's
defaults where tf_keras's v1 classes change them (a 0.05 spread for the random ones) and the
He and LeCun variance scalings."""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph import initializers
from placeviz.graph.initializers import Constant, Ones, VarianceScaling, Zeros
from placeviz.graph.ops import random_ops

_KERAS_SPREAD = 0.05


class RandomNormal(initializers.RandomNormal):
    def __init__(
        self,
        mean: Any = 0.0,
        stddev: Any = _KERAS_SPREAD,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        super().__init__(mean, stddev, seed, dtype)


class RandomUniform(initializers.RandomUniform):
    def __init__(
        self,
        minval: Any = -_KERAS_SPREAD,
        maxval: Any = _KERAS_SPREAD,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        super().__init__(minval, maxval, seed, dtype)


class TruncatedNormal(RandomNormal):
    """Keras's spread, drawn as TF1's truncated normal draws."""

    _draw = staticmethod(random_ops.truncated_normal)


class _FanInScaling(VarianceScaling):
    """He (scale 2) and LeCun (scale 1): variance ``scale / fan_in``; they take only a seed."""

    scale_: float
    distribution_: str

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(self.scale_, "fan_in", self.distribution_, seed)


class HeNormal(_FanInScaling):
    scale_, distribution_ = 2.0, "truncated_normal"


class HeUniform(_FanInScaling):
    scale_, distribution_ = 2.0, "uniform"


class LecunNormal(_FanInScaling):
    scale_, distribution_ = 1.0, "truncated_normal"


class LecunUniform(_FanInScaling):
    scale_, distribution_ = 1.0, "uniform"


zeros, ones, constant = Zeros, Ones, Constant
glorot_normal, glorot_uniform = initializers.GlorotNormal, initializers.GlorotUniform
random_normal = normal = RandomNormal
random_uniform = uniform = RandomUniform
truncated_normal = TruncatedNormal
he_normal, he_uniform, lecun_normal, lecun_uniform = HeNormal, HeUniform, LecunNormal, LecunUniform

__all__ = [
    "Constant",
    "HeNormal",
    "HeUniform",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "constant",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "uniform",
    "zeros",
]
