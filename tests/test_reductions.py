"""Reductions whose reduced axes all have size 1 (cifar10's tower average over one tower): each
output element is one input element, so every reduction of every dtype gives the input, reshaped,
as NumPy's own reductions do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz.graph.ops import math_ops

REDUCTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "Sum": (pv.reduce_sum, np.sum),
    "Mean": (pv.reduce_mean, np.mean),
    "Max": (pv.reduce_max, np.max),
    "Min": (pv.reduce_min, np.min),
    "Prod": (math_ops.reduce_prod, np.prod),  # not public yet: the op itself
    "All": (pv.reduce_all, np.all),
    "Any": (pv.reduce_any, np.any),
}
NUMBERS = (np.float16, np.float32, np.float64, np.int32, np.int64)


def _values(dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Sign-mixed values, a NaN among the floats, and int64s beyond float64's precision."""
    count = int(np.prod(shape))
    if dtype is np.bool_:
        return (np.arange(count) % 3 == 0).reshape(shape)
    values = (np.arange(count) * 7 % 11 - 5).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values[1] = np.nan
    if dtype is np.int64:
        values[2] = 2**62 + 1
    return values.reshape(shape)


def _reference(fn: Callable[..., Any], x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    """NumPy's reduction in the input's dtype (TF's integer mean truncates and stays integer)."""
    if fn is np.mean and x.dtype.kind == "i":
        return x.astype(np.int64).sum(axis=axis, keepdims=keepdims).astype(x.dtype)
    return np.asarray(fn(x, axis=axis, keepdims=keepdims)).astype(x.dtype)


def _cases() -> list[tuple[str, Any]]:
    return [
        (op, dtype)
        for op in REDUCTIONS
        for dtype in ((np.bool_,) if op in ("All", "Any") else NUMBERS)
    ]


@pytest.mark.parametrize(("op", "dtype"), _cases())
@pytest.mark.parametrize("keepdims", [False, True])
def test_reducing_axes_of_size_one_gives_each_element_itself(
    op: str, dtype: Any, keepdims: bool
) -> None:
    reduce, reference = REDUCTIONS[op]
    x = _values(dtype, (1, 3, 1, 4))
    with pv.Graph().as_default():
        listed = reduce(pv.constant(x), [0, -2], keepdims=keepdims)
        scalar = reduce(pv.constant(x[0]), 1, keepdims=keepdims)
        whole = reduce(pv.constant(x[:, :1, :, :1]), keepdims=keepdims)
        unknown_rank = reduce(pv.placeholder_with_default(x, None), [2, 0], keepdims=keepdims)
        with pv.Session() as sess:
            got = sess.run([listed, scalar, whole, unknown_rank])
    want = [
        _reference(reference, x, (0, 2), keepdims),
        _reference(reference, x[0], 1, keepdims),
        _reference(reference, x[:, :1, :, :1], None, keepdims),
        _reference(reference, x, (0, 2), keepdims),
    ]
    for value, expected in zip(got, want):
        assert value.dtype == expected.dtype
        np.testing.assert_array_equal(value, expected)
    assert listed.op.type == op


def test_a_size_one_reduction_beside_a_real_one_reduces_the_real_one() -> None:
    x = _values(np.float32, (2, 1, 3))
    with pv.Graph().as_default():
        total = pv.reduce_sum(pv.constant(x), [0, 1])
        with pv.Session() as sess:
            np.testing.assert_array_equal(sess.run(total), np.sum(x, axis=(0, 1)))
