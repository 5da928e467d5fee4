"""Conformance programs: denormal floats, which TensorFlow's CPU kernels flush to zero (the
processor's flush-to-zero and denormals-are-zero flags). Each fetches a comparison with zero: a
denormal value itself is within the comparison's tolerance of 0 either way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.harness import Run
from conformance.programs import family

__all__: list[str] = []

_TINY = [1e-39, -2e-39, 1e-30, 1.0]


def _fed(
    fn: Callable[[Any, Any], Any], values: list[float] = _TINY, dtype: str = "float32"
) -> Callable[[Any], Any]:
    def build(tf: Any) -> Any:
        x = tf.placeholder(getattr(tf, dtype), [None])
        return Run(fn(tf, x), {x: np.array(values, dtype=dtype)})

    return build


family(
    "denormal",
    {
        "times_one": _fed(lambda tf, x: tf.equal(x * 1.0, 0.0)),
        "plus_zero": _fed(lambda tf, x: tf.equal(x + 0.0, 0.0)),
        "scaled_up": _fed(lambda tf, x: tf.equal(x * 1e30, 0.0)),
        "identity": _fed(lambda tf, x: tf.equal(tf.identity(x), 0.0)),
        "underflow": _fed(lambda tf, x: tf.equal(x * x, 0.0), [1e-20, 1e-19, 1.0]),
        "float64": _fed(lambda tf, x: tf.equal(x * 1.0, 0.0), [1e-310, 1e-300, 1.0], "float64"),
        "reduce_sum": _fed(lambda tf, x: tf.equal(tf.reduce_sum(x), 0.0), [1e-39, 1e-39]),
        "matmul": _fed(
            lambda tf, x: tf.equal(tf.matmul(tf.reshape(x, [1, -1]), tf.ones([3, 1])), 0.0),
            [1e-39, 1e-39, 1e-39],
        ),
        "exp": _fed(lambda tf, x: tf.equal(tf.exp(x), 0.0), [-88.0, -100.0, -104.0, 0.0]),
    },
)
