"""``Model``: a functional model of layer calls, trained with ``compile`` and ``fit``.

Under a ``MirroredStrategy`` (the model made inside ``strategy.scope()``), ``fit`` rebuilds the
model once per replica on that replica's device, gives each replica its share of every batch,
sums the gradients over replicas and applies the same update to every copy of every variable,
so the copies stay equal. Simplified compared with Keras: numpy inputs only, no validation,
callbacks or metrics beyond the loss.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from placeviz import distribute, dtypes
from placeviz.distribute.values import PerReplica
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops import math_ops, state_ops
from placeviz.keras import backend, losses, optimizers
from placeviz.layers.base import Layer, layer_call
from placeviz.train.optimizer import Optimizer


class History:
    def __init__(self) -> None:
        self.history: dict[str, list[float]] = {"loss": []}
        self.epoch: list[int] = []


class Model:
    def __init__(self, inputs: Tensor, outputs: Tensor, name: str | None = None) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.name = name or "model"
        self._calls = _calls_between(inputs, outputs)
        self.layers: list[Layer] = list(dict.fromkeys(layer for layer, _, _ in self._calls))
        self._strategy = distribute.get_strategy()
        self.optimizer: Optimizer | None = None
        self.loss: Callable[[Tensor, Tensor], Tensor] | None = None
        self._train: _TrainGraph | None = None

    @property
    def trainable_variables(self) -> list[Any]:
        return [w for layer in self.layers for w in layer.trainable_weights]

    trainable_weights = trainable_variables

    @property
    def weights(self) -> list[Any]:
        return [w for layer in self.layers for w in layer.weights]

    variables = weights

    def __call__(self, inputs: Tensor) -> Tensor:
        """The model applied to other inputs: every layer call again, with the same variables."""
        produced: dict[Tensor, Tensor] = {self.inputs: inputs}
        for layer, source, result in self._calls:
            produced[result] = layer(produced[source])
        return produced[self.outputs]

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None) -> None:
        if loss is None:
            raise ValueError("compile() needs a loss, e.g. loss='mse'.")
        with self._strategy_scope():
            self.optimizer = optimizers.get(optimizer)
        self.loss = losses.get(loss)
        self._train = None

    def fit(
        self,
        x: Any,
        y: Any,
        batch_size: int | None = None,
        epochs: int = 1,
        verbose: int = 1,
        shuffle: bool = True,
    ) -> History:
        if self.optimizer is None or self.loss is None:
            raise RuntimeError("You must compile your model before training/testing.")
        x, y = _as_float_array(x), _as_float_array(y)
        if len(x) != len(y):
            raise ValueError(f"x and y have different numbers of samples: {len(x)} and {len(y)}")
        train = self._train_graph()
        session = backend.get_session()
        backend.initialize(session, self.weights + self.optimizer.variables())
        batch_size = batch_size or 32
        history = History()
        for epoch in range(epochs):
            order = np.random.permutation(len(x)) if shuffle else np.arange(len(x))
            total = 0.0
            for start in range(0, len(x), batch_size):
                rows = order[start : start + batch_size]
                loss_value, _ = session.run([train.loss, train.op], train.feeds(x[rows], y[rows]))
                total += float(loss_value) * len(rows)
            history.epoch.append(epoch)
            history.history["loss"].append(total / max(len(x), 1))
            if verbose:
                sys.stdout.write(
                    f"Epoch {epoch + 1}/{epochs}\n - loss: {history.history['loss'][-1]:.4f}\n"
                )
        return history

    def predict(self, x: Any, batch_size: int | None = None) -> np.ndarray:
        x = _as_float_array(x)
        session = backend.get_session()
        backend.initialize(session, self.weights)
        return np.asarray(session.run(self.outputs, {self.inputs: x}))

    def _train_graph(self) -> _TrainGraph:
        if self._train is None:
            with get_default_graph().name_scope("training"):
                self._train = _TrainGraph(self, self._strategy)
        return self._train

    def _strategy_scope(self) -> Any:
        return self._strategy.scope()


class _TrainGraph:
    """The ops of one training step: per-replica inputs, loss, summed gradients, updates."""

    def __init__(self, model: Model, strategy: Any) -> None:
        n = strategy.num_replicas_in_sync
        dtype = model.inputs.dtype
        self.x = [_like(model.inputs, f"x_{i}") for i in range(n)]
        self.y = [_like(model.outputs, f"y_{i}") for i in range(n)]
        self.global_batch = state_ops.placeholder(dtype, [], name="global_batch_size")
        loss_fn, optimizer = model.loss, model.optimizer
        assert loss_fn is not None and optimizer is not None

        def step(x: Tensor, y: Tensor) -> tuple[Tensor, Operation]:
            per_example = loss_fn(y, model(x))
            # Each replica's share of the global mean: the replicas' gradients then sum to it.
            loss = math_ops.reduce_sum(per_example) / self.global_batch
            return loss, optimizer.minimize(loss, var_list=model.trainable_variables)

        result = strategy.run(step, args=(PerReplica(self.x), PerReplica(self.y)))
        replicas = strategy.experimental_local_results(result)
        self.loss = strategy.reduce("SUM", PerReplica([r[0] for r in replicas]))
        self.op = strategy.group(PerReplica([r[1] for r in replicas]), name="train")

    def feeds(self, x: np.ndarray, y: np.ndarray) -> dict[Tensor, Any]:
        batch = np.asarray(len(x), self.global_batch.dtype.np)
        feeds: dict[Tensor, Any] = {self.global_batch: batch}
        parts = np.array_split(np.arange(len(x)), len(self.x))
        for rows, x_ph, y_ph in zip(parts, self.x, self.y):
            feeds[x_ph] = x[rows]
            feeds[y_ph] = y[rows]
        return feeds


def _like(tensor: Tensor, name: str) -> Tensor:
    dims = tensor.shape.dims
    shape = None if dims is None else [None, *dims[1:]]
    return state_ops.placeholder(tensor.dtype, shape, name=name)


def _calls_between(inputs: Tensor, outputs: Tensor) -> list[tuple[Layer, Tensor, Tensor]]:
    """The layer calls leading from ``inputs`` to ``outputs``, in the order they were made."""
    calls: list[tuple[Layer, Tensor, Tensor]] = []
    tensor = outputs
    while tensor is not inputs:
        found = layer_call(tensor)
        if found is None:
            raise ValueError(
                f"Graph disconnected: {tensor.name} was not made by a layer from the model's "
                f"inputs ({inputs.name})."
            )
        layer, source = found
        calls.append((layer, source, tensor))
        tensor = source
    return calls[::-1]


def _as_float_array(value: Any) -> np.ndarray:
    array = np.asarray(value)
    return array.astype(dtypes.float32.np) if array.dtype.kind != "f" else array
