"""What a run is asked: fetches resolved and flattened (and how to rebuild their values in the
caller's structure), fed values checked and converted as TensorFlow does."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from placeviz.errors import DTypeMismatchError, InaccessibleTensorError, InvalidArgumentError
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.runtime.dry_run import ShapedArray, check_fed_shape


def resolve(item: Any, graph: Graph, what: str) -> Tensor | Operation:
    if isinstance(item, str):
        try:
            element = graph.as_graph_element(item)
        except (KeyError, ValueError) as exc:
            reason = exc.args[0] if exc.args else exc
            if what == "feed":  # TF's class and words
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {reason}") from None
            raise InvalidArgumentError(f"Cannot interpret {what} {item!r}: {reason}") from None
    elif isinstance(item, Tensor | Operation):
        element = item
    elif hasattr(item, "_as_graph_element"):
        element = item._as_graph_element()
    else:
        raise TypeError(
            f"{what.capitalize()} argument {item!r} has invalid type {type(item).__name__}; "
            "it must be a Tensor, an Operation, a Variable or a name"
        )
    if element.graph is not graph:
        op = element.op if isinstance(element, Tensor) else element
        raise InvalidArgumentError(
            f"{what.capitalize()} {element.name!r} (created at {op.source}) is not an element of "
            "this graph (the session's): it belongs to another graph. Build it inside "
            "`with sess.graph.as_default():` or create the session with graph=.",
            op=op,
        )
    if what != "feed" and not graph.is_fetchable(element):
        op = element.op if isinstance(element, Tensor) else element
        raise InaccessibleTensorError(
            f"Operation {op.name!r} has been marked as not fetchable: it is inside a cond's "
            f"branch or a while loop (created at {op.source}), whose value exists only when that "
            "branch runs, or once per iteration."
        )
    return element


def feed_value(tensor: Tensor, value: Any) -> Any:
    """The fed value as an array of the tensor's dtype.

    TensorFlow wraps integers that do not fit the dtype silently (2**40 fed to int32 is 0);
    placeviz refuses them, since the wrapped value would be a silent wrong answer.
    """
    target = tensor.dtype.np

    def what() -> str:  # formatted only for an error (about 1 us of each feed's 10 us)
        name, dtype = tensor.name, tensor.dtype.name
        return f"Tensor '{name}' of dtype {dtype} (created at {tensor.op.source})"

    if isinstance(value, ShapedArray):
        raise TypeError(
            f"Cannot feed {value!r} to {what()}: a ShapedArray has no values; feed it to a dry run "
            "(pv.RunOptions(dry_run=True), or a session with pv.ConfigProto(dry_run=True))"
        )
    try:
        array = np.array(value, dtype=target)
    except OverflowError as exc:
        raise InvalidArgumentError(
            f"Cannot feed {value!r} to {what()}: {exc}", op=tensor.op
        ) from None
    except (TypeError, ValueError) as exc:
        error = DTypeMismatchError if isinstance(exc, TypeError) else InvalidArgumentError
        raise error(f"Cannot feed {value!r} to {what()}: {exc}", op=tensor.op) from None
    if (
        isinstance(value, np.ndarray)
        and value.size
        and value.dtype.kind in "iu"
        and array.dtype.kind in "iu"
        and not np.can_cast(value.dtype, array.dtype)
    ):
        bounds = np.iinfo(array.dtype)
        low, high = value.min(), value.max()
        if low < bounds.min or high > bounds.max:
            outside = low if low < bounds.min else high
            raise InvalidArgumentError(
                f"Cannot feed an array of {value.dtype} to {what()}: {outside} is out of bounds "
                f"for {tensor.dtype.name} [{bounds.min}, {bounds.max}]",
                op=tensor.op,
            )
    check_fed_shape(tensor, array.shape)
    return array


def value_key(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(None if v is None else (v.dtype.str, v.shape, v.tobytes()) for v in values)


def flatten_fetches(fetches: Any, graph: Graph) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """Flatten a nested fetch structure; return the elements and how to rebuild the values."""
    if fetches is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
    if isinstance(fetches, list | tuple):
        parts = [flatten_fetches(f, graph) for f in fetches]
        elements = [e for part, _ in parts for e in part]
        sizes = [len(part) for part, _ in parts]
        is_namedtuple = isinstance(fetches, tuple) and hasattr(fetches, "_fields")
        kind = type(fetches)

        def rebuild(values: list[Any]) -> Any:
            out, start = [], 0
            for (_, sub), size in zip(parts, sizes):
                out.append(sub(values[start : start + size]))
                start += size
            if is_namedtuple:
                return kind(*out)
            return out if kind is list else tuple(out)

        return elements, rebuild
    if isinstance(fetches, Mapping):
        keys = list(fetches)
        inner = flatten_fetches([fetches[k] for k in keys], graph)

        def rebuild_dict(values: list[Any]) -> Any:
            return dict(zip(keys, inner[1](values)))

        return inner[0], rebuild_dict
    element = resolve(fetches, graph, "fetch")
    return [element], _first


def _first(values: list[Any]) -> Any:
    return values[0]
