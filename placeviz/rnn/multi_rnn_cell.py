"""``MultiRNNCell``: cells stacked, each layer's output the next layer's input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placeviz import nest
from placeviz.graph.core import Tensor, get_default_graph
from placeviz.graph.ops import array_ops
from placeviz.graph.variable_scope import variable_scope
from placeviz.rnn.cell import RNNCell


class MultiRNNCell(RNNCell):
    """Layer ``i`` runs in ``cell_<i>/`` (``rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel``)
    with its own part of the state: a tuple of the layers' states, or (``state_is_tuple=False``)
    one tensor of them concatenated."""

    base_name = "multi_rnn_cell"

    def __init__(self, cells: Sequence[Any], state_is_tuple: bool = True) -> None:
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but received: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError(
                "Some cells return tuples of states, but the flag state_is_tuple is not set. "
                f"State sizes are: {[c.state_size for c in self._cells]}"
            )

    @property
    def state_size(self) -> Any:
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self) -> Any:
        return self._cells[-1].output_size

    @property
    def weights(self) -> list[Any]:
        return [w for cell in self._cells for w in cell.weights]

    @property
    def trainable_weights(self) -> list[Any]:
        return [w for cell in self._cells for w in cell.trainable_weights] if self.trainable else []

    trainable_variables = trainable_weights
    variables = weights

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with get_default_graph().name_scope("MultiRNNCellZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    def call(self, inputs: Tensor, state: Any) -> Any:
        position = 0
        current = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError(
                            f"Expected state to be a tuple of length {len(self.state_size)}, "
                            f"but received: {state}"
                        )
                    cell_state = state[i]
                else:
                    cell_state = array_ops.slice(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, array_ops.concat(new_states, 1)
