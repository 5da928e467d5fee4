"""The nested states RNN cells pass around: tensors in tuples, lists and namedtuples
(``LSTMStateTuple``), flattened and rebuilt in TensorFlow's order (``tf.nest``'s)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def is_nested(structure: Any) -> bool:
    return isinstance(structure, list | tuple)


def flatten(structure: Any) -> list[Any]:
    """The leaves, depth first, left to right."""
    return list(_leaves(structure))


def _leaves(structure: Any) -> Iterator[Any]:
    if is_nested(structure):
        for item in structure:
            yield from _leaves(item)
    else:
        yield structure


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """``flat``'s leaves in ``structure``'s shape (its namedtuples rebuilt as namedtuples)."""
    leaves = iter(flat)

    def pack(node: Any) -> Any:
        if not is_nested(node):
            return next(leaves)
        return rebuild(node, [pack(item) for item in node])

    return pack(structure)


def map_structure(fn: Callable[..., Any], *structures: Any) -> Any:
    """``fn`` of the leaves at each place of structures of one shape, in that shape."""
    flats = [flatten(s) for s in structures]
    if len({len(f) for f in flats}) > 1:
        raise ValueError(
            "The two structures don't have the same number of elements: "
            + ", ".join(str(s) for s in structures)
        )
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def rebuild(node: Any, items: list[Any]) -> Any:
    """A tuple, list or namedtuple like ``node`` holding ``items``."""
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return type(node)(*items)
    return type(node)(items)
