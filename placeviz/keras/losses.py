"""Per-example losses, by Keras name (``loss='mse'``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placeviz.graph.core import Tensor
from placeviz.graph.ops import math_ops

Loss = Callable[[Tensor, Tensor], Tensor]


def mean_squared_error(y_true: Tensor, y_pred: Tensor) -> Tensor:
    return math_ops.reduce_mean(math_ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true: Tensor, y_pred: Tensor) -> Tensor:
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


_BY_NAME: dict[str, Loss] = {
    "mse": mean_squared_error,
    "mean_squared_error": mean_squared_error,
    "mae": mean_absolute_error,
    "mean_absolute_error": mean_absolute_error,
}


def get(identifier: Any) -> Loss:
    if callable(identifier):
        return identifier
    try:
        return _BY_NAME[identifier]
    except KeyError:
        raise ValueError(f"Unknown loss {identifier!r}; known: {', '.join(_BY_NAME)}") from None
