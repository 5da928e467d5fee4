"""TF1's ``nn.dropout`` as TensorFlow builds it in a graph.

The kept elements are scaled by ``1 / (1 - rate)`` (a Mul by a constant, or a RealDiv by
``1 - rate`` for a rate tensor) and a ``RandomUniform`` draw of the noise shape chooses them
(``GreaterEqual`` the rate, then ``SelectV2`` against zero). The draw is seeded as every random
op: from the graph's seed and ``seed``, so two sessions of a seeded graph drop the same elements.
"""

from __future__ import annotations

import numbers
from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor, get_default_graph, is_tensor_like
from placeviz.graph.ops import array_ops, constant_op, math_ops, random_ops
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.shapes import ShapeError, TensorShape


def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: int | None = None,
    name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zeroes each element with probability ``rate`` and scales the rest by ``1 / (1 - rate)``,
    so the expected sum is unchanged; ``keep_prob`` is the deprecated ``1 - rate``. Dimensions
    where ``noise_shape`` is 1 keep or drop together. A rate of 0 returns ``x`` itself."""
    if keep_prob is not None:
        if rate is not None:
            raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
        try:
            rate = 1.0 - keep_prob
        except TypeError:
            raise ValueError(
                "`keep_prob` must be a floating point number or Tensor. "
                f"Received: keep_prob={keep_prob}"
            ) from None
    if rate is None:
        raise ValueError(f"`rate` must be provided. Received: rate={rate}")
    graph = get_default_graph()
    with graph.name_scope(name or "dropout"):
        is_number = isinstance(rate, numbers.Real)
        if is_number and not 0 <= rate < 1:
            raise ValueError(
                "`rate` must be a scalar tensor or a float in the range [0, 1). "
                f"Received: rate={rate}"
            )
        tensor = convert_to_tensor(x, name="x")
        dtype = tensor.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError(
                "`x.dtype` must be a floating point tensor as `x` will be scaled. "
                f"Received: x_dtype=<dtype: '{dtype.name}'>"
            )
        if is_number and rate == 0:
            return tensor
        if is_number:
            scale = constant_op.constant(1 / (1 - rate), dtype)
            kept = make_op("Mul", [tensor, scale], "Mul").outputs[0]
        elif is_tensor_like(rate):
            rate = _rate_tensor(rate, dtype)
            one = constant_op.constant(1, dtype)
            left = make_op("Sub", [one, rate], "Sub").outputs[0]
            kept = make_op("RealDiv", [tensor, left], "RealDiv").outputs[0]
        else:
            raise ValueError(f"`rate` must be a scalar or scalar tensor. Received: rate={rate}")
        draw = random_ops.random_uniform(_noise_shape(tensor, noise_shape), dtype=dtype, seed=seed)
        keep = draw >= rate
        zero = constant_op.constant(0, dtype)
        out = math_ops.where_v2(keep, kept, zero)
        out.set_shape(tensor.shape)
        return out


def _rate_tensor(rate: Any, dtype: dtypes.DType) -> Tensor:
    """A scalar of x's dtype (TF checks, it does not convert)."""
    tensor = convert_to_tensor(rate)
    if tensor.shape.ndims not in (None, 0):
        raise ShapeError(f"Shape {tensor.shape} must have rank 0")
    if tensor.dtype.base_dtype is not dtype:
        raise ValueError(
            "`x.dtype` must be compatible with `rate.dtype`. Received: "
            f"x.dtype=<dtype: '{dtype.name}'> and rate.dtype=<dtype: "
            f"'{tensor.dtype.base_dtype.name}'>"
        )
    return tensor


def _noise_shape(x: Tensor, noise_shape: Any) -> Any:
    """TF's ``_get_noise_shape``: x's shape (``Shape``, a Const where known) by default; a
    ``noise_shape`` of x's rank takes x's size where it leaves a dimension unknown."""
    if noise_shape is None:
        return array_ops.shape(x)
    if is_tensor_like(noise_shape):
        return noise_shape
    given = TensorShape(noise_shape)
    dims = x.shape.dims
    if dims is not None and given.dims is not None and len(dims) == len(given.dims):
        return TensorShape([d if g is None else g for d, g in zip(dims, given.dims)])
    return given
