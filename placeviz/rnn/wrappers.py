"""Cell wrappers: ``DeviceWrapper`` (a cell's ops on one device: a layer per GPU),
``DropoutWrapper`` and ``ResidualWrapper``. A wrapper calls its cell directly, so it adds no
scope of its own: the wrapped cell's variables and ops keep their names."""

from __future__ import annotations

import hashlib
import numbers
from typing import Any

from placeviz import nest
from placeviz.graph.core import Tensor, get_default_graph
from placeviz.graph.ops import array_ops, math_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.dropout import dropout
from placeviz.graph.ops.random_ops import random_uniform
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.shapes import TensorShape
from placeviz.rnn.cell import LSTMStateTuple, RNNCell


def assert_like_rnncell(cell_name: str, cell: Any) -> None:
    """TF's check, with its words: a cell has sizes, a zero state, and can be called."""
    missing = [
        text
        for text, ok in (
            ("'output_size' property is missing", hasattr(cell, "output_size")),
            ("'state_size' property is missing", hasattr(cell, "state_size")),
            (
                "either 'zero_state' or 'get_initial_state' method is required",
                hasattr(cell, "zero_state") or hasattr(cell, "get_initial_state"),
            ),
            ("is not callable", callable(cell)),
        )
        if not ok
    ]
    if missing:
        raise TypeError(
            f"The argument {cell_name!r} ({cell}) is not an RNNCell: {', '.join(missing)}."
        )


class _Wrapper(RNNCell):
    def __init__(self, cell: Any) -> None:
        super().__init__()
        assert_like_rnncell("cell", cell)
        self.cell = cell

    @property
    def state_size(self) -> Any:
        return self.cell.state_size

    @property
    def output_size(self) -> Any:
        return self.cell.output_size

    @property
    def weights(self) -> list[Any]:
        return self.cell.weights

    @property
    def trainable_weights(self) -> list[Any]:
        return self.cell.trainable_weights

    trainable_variables = trainable_weights
    variables = weights

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any) -> Any:  # type: ignore[override]
        raise NotImplementedError


class DeviceWrapper(_Wrapper):
    """Every op of the cell (and of its zero state) under ``device(device)``."""

    def __init__(self, cell: Any, device: Any) -> None:
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        graph = get_default_graph()
        with graph.name_scope("DeviceWrapperZeroState"), graph.device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any) -> Any:  # type: ignore[override]
        with get_default_graph().device(self._device):
            return self.cell(inputs, state)


class DropoutWrapper(_Wrapper):
    """Dropout of the cell's inputs, outputs and new state (never an LSTM's memory ``c``),
    each with its keep probability; the seeds derive from ``seed`` as TensorFlow's do.

    With ``variational_recurrent=True`` every time step drops the same units (Gal and
    Ghahramani): the wrapper draws one ``[1, size]`` uniform noise per dropped part when it is
    built, under the scopes it is built in, and each step turns it into a mask with ``Floor``.
    TF asks for ``dtype`` then, and for ``input_size`` when the inputs are dropped."""

    def __init__(
        self,
        cell: Any,
        input_keep_prob: Any = 1.0,
        output_keep_prob: Any = 1.0,
        state_keep_prob: Any = 1.0,
        variational_recurrent: bool = False,
        input_size: Any = None,
        dtype: Any = None,
        seed: int | None = None,
        dropout_state_filter_visitor: Any = None,
    ) -> None:
        super().__init__(cell)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError(
                "dropout_state_filter_visitor must be callable. "
                f"Received: {dropout_state_filter_visitor}"
            )
        self._state_filter = dropout_state_filter_visitor or _default_state_filter
        with get_default_graph().name_scope("DropoutWrapperInit"):
            self._input_keep_prob = _keep_prob(input_keep_prob, "input_keep_prob")
            self._state_keep_prob = _keep_prob(state_keep_prob, "state_keep_prob")
            self._output_keep_prob = _keep_prob(output_keep_prob, "output_keep_prob")
        self._seed = seed
        self._noise: dict[str, Any] = {}
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if _should_dropout(self._input_keep_prob):
                if input_size is None:
                    raise ValueError(
                        "When variational_recurrent=True and input_keep_prob < 1.0 or is "
                        "unknown, input_size must be provided"
                    )
                self._noise["input"] = self._batch_noise(input_size, "input", dtype)
            self._noise["state"] = self._batch_noise(cell.state_size, "state", dtype)
            self._noise["output"] = self._batch_noise(cell.output_size, "output", dtype)

    @property
    def wrapped_cell(self) -> Any:
        return self.cell

    def _gen_seed(self, salt_prefix: str, index: int) -> int | None:
        """TF's: the md5 of the seed and a salt naming what is dropped."""
        if self._seed is None:
            return None
        text = f"{self._seed}{salt_prefix}_{index}".encode()
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _batch_noise(self, sizes: Any, salt: str, dtype: Any) -> Any:
        """Uniform noise of shape ``[1, size]`` for each size in ``sizes``: one mask for the
        whole batch and every step."""
        index = 0

        def noise(size: Any) -> Tensor:
            nonlocal index
            i, index = index, index + 1
            dims = [size] if isinstance(size, int) else TensorShape(size).as_list()
            shape = array_ops.concat(([1], dims), 0)
            return random_uniform(shape, seed=self._gen_seed(salt, i), dtype=dtype)

        return _map_up_to(sizes, lambda _, size: noise(size), sizes)

    def _dropout(self, values: Any, salt: str, keep_prob: Any, filtered: Any = None) -> Any:
        shallow = values if filtered is None else filtered
        index = 0

        def drop(do_dropout: Any, value: Any, noise: Any = None) -> Any:
            nonlocal index
            i, index = index, index + 1
            if isinstance(do_dropout, bool) and not do_dropout:
                return value
            if noise is None:
                return dropout(value, rate=1.0 - keep_prob, seed=self._gen_seed(salt, i))
            return _variational_dropout(value, noise, keep_prob)

        if salt in self._noise:
            return _map_up_to(shallow, drop, values, self._noise[salt])
        return _map_up_to(shallow, drop, values)

    def __call__(self, inputs: Any, state: Any) -> Any:  # type: ignore[override]
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = self.cell(inputs, state)
        if _should_dropout(self._state_keep_prob):
            filtered = _traverse_shallow(self._state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._state_keep_prob, filtered)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


def _variational_dropout(value: Any, noise: Tensor, keep_prob: Any) -> Tensor:
    """TF's: ``floor(keep_prob + noise)`` is 1 with probability ``keep_prob``, else 0; the
    kept values are scaled by ``1 / keep_prob``."""
    binary = math_ops.floor(keep_prob + noise)
    dropped = math_ops.divide(value, keep_prob) * binary
    dropped.set_shape(value.shape)
    return dropped


class ResidualWrapper(_Wrapper):
    """The cell's output plus its input (or ``residual_fn(inputs, outputs)``)."""

    def __init__(self, cell: Any, residual_fn: Any = None) -> None:
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs: Any, state: Any) -> Any:  # type: ignore[override]
        outputs, new_state = self.cell(inputs, state)
        return (self._residual_fn or _add_residual)(inputs, outputs), new_state


def _add_residual(inputs: Any, outputs: Any) -> Any:
    def add(x: Any, y: Any) -> Tensor:
        x = convert_to_tensor(x)
        if not x.shape.is_compatible_with(y.shape):
            raise ValueError(f"Shapes {x.shape} and {y.shape} are incompatible")
        return x + y

    return nest.map_structure(add, inputs, outputs)


def _keep_prob(value: Any, what: str) -> Any:
    """A float when the probability is a constant (checked to be in [0, 1]), else the tensor;
    TF converts every one to a tensor here, so their Consts are in the graph."""
    tensor = convert_to_tensor(value)
    known = constant_value(tensor)
    if known is None:
        return tensor
    if known < 0 or known > 1:
        raise ValueError(f"Parameter {what} must be between 0 and 1. Received {float(known)}")
    return float(known)


def _should_dropout(keep_prob: Any) -> bool:
    return not isinstance(keep_prob, numbers.Real) or keep_prob < 1


def _default_state_filter(substate: Any) -> Any:
    """Dropout on every part of the state but an LSTM's memory ``c``."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _traverse_shallow(visitor: Any, structure: Any) -> Any:
    """TF's ``get_traverse_shallow_structure``: where the visitor says True of a nested part,
    look inside; a bool of a leaf, or a structure of bools, is the answer for that part."""
    verdict = visitor(structure)
    if verdict is True and nest.is_nested(structure):
        return nest.rebuild(structure, [_traverse_shallow(visitor, part) for part in structure])
    return verdict


def _map_up_to(shallow: Any, fn: Any, *structures: Any) -> Any:
    """``fn(flag, *parts)`` for each leaf of ``shallow`` and the parts of ``structures`` under
    it (TF's ``map_structure_up_to``), in the first structure's shape."""
    if not nest.is_nested(shallow):
        return fn(shallow, *structures)
    parts = zip(shallow, *structures, strict=True)
    return nest.rebuild(structures[0], [_map_up_to(s, fn, *p) for s, *p in parts])
