"""TensorFlow 1's initializers: objects that build a variable's first value for a given shape.

``get_variable`` knows the shape only when it creates the variable, so an initializer is a
recipe, ``initializer(shape, dtype=None, partition_info=None) -> Tensor``, rather than a tensor.
As in TF1, the lower-case names (``zeros_initializer``, ...) are the classes themselves:
``zeros_initializer()`` makes an initializer, and ``get_variable`` instantiates a class it is given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, constant_op, random_ops

Shape = Sequence[int]


class Initializer:
    """Base class: holds the default dtype that a ``dtype`` given at call time overrides."""

    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        raise NotImplementedError

    def _dtype(self, dtype: Any) -> dtypes.DType:
        return self.dtype if dtype is None else dtypes.as_dtype(dtype)


class Zeros(Initializer):
    """All zeros (False for bool): ``get_variable``'s default for integer and bool variables."""

    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return array_ops.zeros(shape, self._dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return array_ops.ones(shape, self._dtype(dtype))


class Constant(Initializer):
    """A scalar fills the shape; a shorter list is padded with its last element (TF1's rule)."""

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32) -> None:
        if not (np.isscalar(value) or isinstance(value, list | tuple | np.ndarray)):
            raise TypeError(
                f"Invalid type for initial value={value} of type: {type(value).__name__}. "
                "Expected Python scalar, list or tuple of values, or numpy.ndarray."
            )
        super().__init__(dtype)
        self.value = value

    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return constant_op.constant(_fill(self.value, shape), dtype=self._dtype(dtype))


def _fill(value: Any, shape: Shape) -> np.ndarray:
    flat = np.asarray(value).ravel()
    count = math.prod(shape)
    if flat.size > count:
        raise ValueError(f"Too many elements provided. Takes at most {count}, but got {flat.size}.")
    padding = np.full(count - flat.size, flat[-1] if flat.size else 0, dtype=flat.dtype)
    return np.concatenate([flat, padding]).reshape(shape)


class RandomUniform(Initializer):
    """Uniform in [minval, maxval); ``maxval=None`` means 1 for floats (integers need one)."""

    def __init__(
        self,
        minval: Any = 0,
        maxval: Any = None,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.random_uniform(
            shape, self.minval, self.maxval, self._dtype(dtype), seed=self.seed
        )


class RandomNormal(Initializer):
    _draw = staticmethod(random_ops.random_normal)

    def __init__(
        self,
        mean: Any = 0.0,
        stddev: Any = 1.0,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        super().__init__(_float_dtype(dtype))
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return self._draw(shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class TruncatedNormal(RandomNormal):
    """Normal values, those more than two ``stddev`` from ``mean`` redrawn."""

    _draw = staticmethod(random_ops.truncated_normal)


_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")
_TRUNCATED_STDDEV = 0.87962566103423978
"""The standard deviation of a standard normal truncated to (-2, 2) (scipy's truncnorm.std):
TF divides by it so that the truncated draws keep the variance asked for."""


class VarianceScaling(Initializer):
    """Draws of variance ``scale / n``, n the kernel's fan in, fan out or their mean (at least 1).

    ``truncated_normal`` (and its deprecated alias ``normal``) draws with a corrected stddev,
    ``untruncated_normal`` plain normal values, ``uniform`` values in [-limit, limit) with
    limit = sqrt(3 * scale / n). TF1's defaults: scale 1, fan in, truncated normal.
    """

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be a positive float. Received: {scale}")
        if mode not in _MODES:
            raise ValueError(
                "Argument `mode` should be one of ('fan_in', 'fan_out', 'fan_avg'). "
                f"Received: {mode}"
            )
        distribution = distribution.lower()
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(
                "Argument `distribution` should be one of ('normal', uniform', 'truncated_normal', "
                f"'untruncated_normal'). Received: {distribution}"
            )
        super().__init__(_float_dtype(dtype))
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape: Shape, dtype: Any = None, partition_info: Any = None) -> Tensor:
        fan_in, fan_out = compute_fans(
            shape if partition_info is None else partition_info.full_shape
        )
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, fan[self.mode])
        target = self._dtype(dtype)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, target, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), target, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, target, seed=self.seed)


class GlorotUniform(VarianceScaling):
    """Uniform in [-limit, limit), limit = sqrt(6 / (fan_in + fan_out)): floats' default.

    As in TF1, the deprecated constructor ``dtype`` is ignored (float32; a call's dtype rules).
    """

    def __init__(self, seed: int | None = None, dtype: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed)


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (before TF's correction).

    As in TF1, the deprecated constructor ``dtype`` is ignored.
    """

    def __init__(self, seed: int | None = None, dtype: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)


def compute_fans(shape: Shape) -> tuple[int, int]:
    """TF's ``_compute_fans``: a kernel's last two dims, scaled by its receptive field size."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    receptive_field = math.prod(shape[:-2])
    return int(shape[-2] * receptive_field), int(shape[-1] * receptive_field)


def _float_dtype(dtype: Any) -> dtypes.DType:
    target = dtypes.as_dtype(dtype)
    if not target.is_floating:
        raise ValueError(
            "Argument `dtype` is expected to be floating point. "
            f"Received: <dtype: '{target.name}'>."
        )
    return target


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
