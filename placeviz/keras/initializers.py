"""``tf.compat.v1.keras.initializers``: TF1's initializers under Keras's names, with Keras's
defaults where tf_keras's v1 classes change them (a 0.05 spread for the random ones) and the
He and LeCun variance scalings."""

from __future__ import annotations

from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import initializers
from placeviz.graph.core import Tensor
from placeviz.graph.initializers import Constant, Initializer, Ones, VarianceScaling, Zeros
from placeviz.graph.ops import array_ops, linalg_ops, math_ops, random_ops

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


class Orthogonal(Initializer):
    """Keras's ``orthogonal``: the Q of a QR decomposition of a normal sample, signs fixed
    by R's diagonal, transposed when the shape is wider than tall, times ``gain`` (TF's
    ``Orthogonal``; its random values differ from TF's, as every random op's here)."""

    def __init__(self, gain: float = 1.0, seed: int | None = None) -> None:
        super().__init__(dtypes.float32)
        self.gain, self.seed = gain, seed

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dims = [int(d) for d in shape]
        if len(dims) < 2:
            raise ValueError(
                "The tensor to initialize must be at least two-dimensional. Received: "
                f"shape={tuple(dims)} of rank {len(dims)}."
            )
        rows = int(np.prod(dims[:-1]))
        cols = dims[-1]
        flat = (max(rows, cols), min(rows, cols))
        dtype = self._dtype(dtype)
        sample = random_ops.random_normal(flat, 0.0, 1.0, dtype, seed=self.seed)
        q, r = linalg_ops.qr(sample, full_matrices=False)
        diagonal = math_ops.reduce_sum(r * np.eye(flat[1], dtype=dtype.np), axis=0)
        q = q * math_ops.sign(diagonal)
        if rows < cols:
            q = array_ops.transpose(q)
        return self.gain * array_ops.reshape(q, dims)


glorot_normal, glorot_uniform = initializers.GlorotNormal, initializers.GlorotUniform
random_normal = normal = RandomNormal
random_uniform = uniform = RandomUniform
truncated_normal = TruncatedNormal
he_normal, he_uniform, lecun_normal, lecun_uniform = HeNormal, HeUniform, LecunNormal, LecunUniform
orthogonal = Orthogonal

__all__ = [
    "Constant",
    "HeNormal",
    "HeUniform",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "Orthogonal",
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
    "orthogonal",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "uniform",
    "zeros",
]
