"""Per-example losses, by Keras name (``loss='mse'``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Tensor
from placeviz.graph.ops import array_ops, clip_ops, loss_ops, math_ops

# Keras's backend epsilon: probabilities are clipped to [EPSILON, 1 - EPSILON] before the log
EPSILON = 1e-7

Loss = Callable[[Tensor, Tensor], Tensor]


def mean_squared_error(y_true: Tensor, y_pred: Tensor) -> Tensor:
    return math_ops.reduce_mean(math_ops.square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true: Tensor, y_pred: Tensor) -> Tensor:
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def categorical_crossentropy(y_true: Tensor, y_pred: Tensor) -> Tensor:
    """Keras's, from probabilities: renormalized, clipped, ``-sum(y_true * log(y_pred))``."""
    probabilities = y_pred / math_ops.reduce_sum(y_pred, axis=-1, keepdims=True)
    clipped = clip_ops.clip_by_value(probabilities, EPSILON, 1.0 - EPSILON)
    return -math_ops.reduce_sum(y_true * math_ops.log(clipped), axis=-1)


def sparse_categorical_crossentropy(y_true: Tensor, y_pred: Tensor) -> Tensor:
    """Keras's, from probabilities and class indices (any shape holding one per example)."""
    clipped = clip_ops.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    labels = array_ops.cast(array_ops.reshape(y_true, [-1]), dtypes.int32)
    return loss_ops.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=math_ops.log(clipped)
    )


_BY_NAME: dict[str, Loss] = {
    "mse": mean_squared_error,
    "mean_squared_error": mean_squared_error,
    "mae": mean_absolute_error,
    "mean_absolute_error": mean_absolute_error,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}


def get(identifier: Any) -> Loss:
    if callable(identifier):
        return identifier
    try:
        return _BY_NAME[identifier]
    except KeyError:
        raise ValueError(f"Unknown loss {identifier!r}; known: {', '.join(_BY_NAME)}") from None


__all__ = [
    "categorical_crossentropy",
    "get",
    "mean_absolute_error",
    "mean_squared_error",
    "sparse_categorical_crossentropy",
]
