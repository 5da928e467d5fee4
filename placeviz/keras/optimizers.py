"""Keras's optimizer names for TF1's optimizers (``SGD(learning_rate=0.2)``, ``'adam'``)."""

from __future__ import annotations

from typing import Any

from placeviz.train.adam import AdamOptimizer
from placeviz.train.gradient_descent import GradientDescentOptimizer
from placeviz.train.momentum import MomentumOptimizer
from placeviz.train.optimizer import Optimizer


def SGD(
    learning_rate: float = 0.01, momentum: float = 0.0, nesterov: bool = False, name: str = "SGD"
) -> Optimizer:
    if momentum:
        return MomentumOptimizer(learning_rate, momentum, use_nesterov=nesterov, name=name)
    return GradientDescentOptimizer(learning_rate, name=name)


def Adam(
    learning_rate: float = 0.001,
    beta_1: float = 0.9,
    beta_2: float = 0.999,
    epsilon: float = 1e-7,
    name: str = "Adam",
) -> Optimizer:
    return AdamOptimizer(learning_rate, beta_1, beta_2, epsilon, name=name)


def get(identifier: Any) -> Optimizer:
    if isinstance(identifier, Optimizer):
        return identifier
    makers = {"sgd": SGD, "adam": Adam}
    try:
        return makers[str(identifier).lower()]()
    except KeyError:
        raise ValueError(f"Unknown optimizer {identifier!r}; known: sgd, adam") from None


__all__ = ["SGD", "Adam", "Optimizer", "get"]
