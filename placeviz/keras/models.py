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
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import math_ops, state_ops
from placeviz.graph.variable_scope import VariableScope, variable_scope
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
        self._evaluation: tuple[Tensor, Tensor] | None = None

    @property
    def trainable_variables(self) -> list[Any]:
        return [w for layer in self.layers for w in layer.trainable_weights]

    trainable_weights = trainable_variables

    @property
    def weights(self) -> list[Any]:
        return [w for layer in self.layers for w in layer.weights]

    variables = weights

    def __call__(self, inputs: Tensor, training: bool = False) -> Tensor:
        """The model applied to other inputs: every layer call again, with the same variables,
        built for training (Dropout active, BatchNormalization on the batch's statistics) or not."""
        produced: dict[Tensor, Tensor] = {self.inputs: inputs}
        with backend.learning_phase_scope(training):
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
        self._evaluation = None

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
        self._build_for(x)
        train = self._train_graph()
        session = backend.get_session()
        backend.initialize(session, self.weights + self.optimizer.variables())
        batch_size = batch_size or 32
        history = History()
        # with a graph-level seed the batches repeat too, as TF's seeded shuffle of the indices
        shuffler = np.random.default_rng(get_default_graph().seed)
        for epoch in range(epochs):
            order = shuffler.permutation(len(x)) if shuffle else np.arange(len(x))
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
        self._build_for(x)
        session = backend.get_session()
        backend.initialize(session, self.weights)
        return np.asarray(session.run(self.outputs, {self.inputs: x}))

    def evaluate(self, x: Any, y: Any, batch_size: int | None = None, verbose: int = 0) -> float:
        """The mean loss over ``x``, with the model built for inference."""
        if self.loss is None:
            raise RuntimeError("You must compile your model before training/testing.")
        x, y = _as_float_array(x), _as_float_array(y)
        self._build_for(x)
        if self._evaluation is None:
            with get_default_graph().name_scope("evaluation"):
                labels = _like(self.outputs, "y")
                self._evaluation = (labels, math_ops.reduce_mean(self.loss(labels, self.outputs)))
        labels, loss = self._evaluation
        session = backend.get_session()
        backend.initialize(session, self.weights)
        return float(session.run(loss, {self.inputs: x, labels: y}))

    def _build_for(self, x: np.ndarray) -> None:
        """Where the layers wait for the data's shape (a Sequential model), build them now."""

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
            updates = get_default_graph().get_collection_ref(GraphKeys.UPDATE_OPS)
            known = len(updates)
            per_example = loss_fn(y, model(x, training=True))
            # Each replica's share of the global mean: the replicas' gradients then sum to it.
            loss = math_ops.reduce_sum(per_example) / self.global_batch
            minimize = optimizer.minimize(loss, var_list=model.trainable_variables)
            # The moving statistics this replica's BatchNormalization layers update.
            return loss, state_ops.group(minimize, *updates[known:])

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


class Sequential(Model):
    """A stack of layers, each called on the one before's output; built on the first data
    (or a first ``keras.Input``) once the input's shape is known."""

    def __init__(self, layers: list[Any] | None = None, name: str | None = None) -> None:
        self._given_name = name
        self._scope: VariableScope | None = None
        self._strategy = distribute.get_strategy()
        self.optimizer = None
        self.loss = None
        self._train = None
        self._evaluation = None
        self.layers = []
        self.inputs: Tensor | None = None  # type: ignore[assignment]
        self.outputs: Tensor | None = None  # type: ignore[assignment]
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: Any) -> None:
        if isinstance(layer, Tensor):
            if self.layers or self.inputs is not None:
                raise ValueError("A keras.Input can only be the first entry of a Sequential.")
            self.inputs = layer
            return
        if not isinstance(layer, Layer):
            raise TypeError(
                "The added layer must be an instance of class Layer. "
                f"Received: layer={layer} of type {type(layer)}."
            )
        previous = self.outputs if self.outputs is not None else self.inputs
        self.layers.append(layer)
        if previous is not None:  # a model begun with a keras.Input, or built: grows at once
            self.outputs = layer(previous)

    def build(self, input_shape: Any) -> None:
        with self._strategy_scope():
            self._build_on(_input_like(list(input_shape)))

    def _build_for(self, x: np.ndarray) -> None:
        if self.outputs is None:
            self.build([None, *x.shape[1:]])

    def _build_on(self, inputs: Tensor) -> None:
        self.inputs = inputs
        self.outputs = self(inputs)

    def __call__(self, inputs: Tensor, training: bool = False) -> Tensor:
        """As Keras's, the layers a call builds get the model's scope (``sequential/dense``)."""
        if self._scope is None:
            scope = variable_scope(None, default_name=self._given_name or "sequential")
        else:
            scope = variable_scope(self._scope, reuse=True)
        with scope as entered, backend.learning_phase_scope(training):
            self._scope = entered
            outputs = inputs
            for layer in self.layers:
                outputs = layer(outputs)
        return outputs

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._scope.name if self._scope is not None else self._given_name or "sequential"

    def summary(self, print_fn: Callable[[str], Any] = print) -> None:
        """One line per layer: its name, output shape and number of weights."""
        if self.inputs is None:
            raise ValueError("This model has not yet been built. Build it first (call build()).")
        print_fn(f'Model: "{self.name}"')
        for layer, tensor in zip(self.layers, self._outputs_of_layers()):
            shape = tensor.shape
            count = sum(int(np.prod(w.shape.as_list())) for w in layer.weights)
            print_fn(f"{layer.name:<30}{shape!s:<24}{count}")
        print_fn(f"Total params: {sum(int(np.prod(w.shape.as_list())) for w in self.weights)}")

    def _outputs_of_layers(self) -> list[Tensor]:
        found: list[Tensor] = []
        tensor = self.outputs
        while tensor is not None and tensor is not self.inputs:
            call = layer_call(tensor)
            if call is None:
                break
            found.append(tensor)
            tensor = call[1]
        return found[::-1]


def _input_like(shape: list[Any]) -> Tensor:
    return state_ops.placeholder(dtypes.float32, shape, name="input")


__all__ = ["Model", "Sequential"]
