"""Denormals flush to zero inside runs, as TensorFlow's CPU kernels flush them (the conformance
programs ``denormal_*`` hold what TensorFlow showed), on every thread that runs kernels, and the
caller's own NumPy keeps IEEE denormals after a run, a failed one too."""

from __future__ import annotations

import platform
import sys

import numpy as np
import pytest

import placeviz as pv

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() != "x86_64",
    reason="placeviz flushes denormals on x86-64 Linux (glibc) only",
)

TINY = np.array([1e-39, 1.0], np.float32)
FLUSHED = [0, int(np.float32(1.0).view(np.uint32))]  # bit patterns: a comparison of floats
# could itself read a denormal as zero


def bits(values: np.ndarray) -> list[int]:
    return np.asarray(values, np.float32).view(np.uint32).tolist()


def caller_keeps_denormals() -> bool:
    return bits(TINY * np.float32(1.0)) == bits(TINY)


def test_a_run_flushes_and_the_caller_keeps_denormals() -> None:
    x = pv.placeholder(pv.float32, [2])
    with pv.Session() as sess:
        assert bits(sess.run(x * 1.0, {x: TINY})) == FLUSHED
    assert caller_keeps_denormals()


def test_a_failed_run_gives_the_caller_its_modes_back() -> None:
    x = pv.placeholder(pv.float32, [2])
    index = pv.placeholder(pv.int32, [1])
    picked = pv.gather(x * 1.0, index)  # fails in its kernel, after the product ran
    with pv.Session() as sess:
        with pytest.raises(pv.errors.InvalidArgumentError):
            sess.run(picked, {x: TINY, index: [5]})
        assert bits(sess.run(x * 1.0, {x: TINY})) == FLUSHED  # still usable
    assert caller_keeps_denormals()


def test_parallel_streams_flush_too() -> None:
    pv.config.simulate_gpus(2)
    x = pv.placeholder(pv.float32, [2])
    products = []
    for gpu in range(2):
        with pv.device(f"/gpu:{gpu}"):
            products.append(x * 1.0)
    with pv.Session() as sess:
        for value in sess.run(products, {x: TINY}):
            assert bits(value) == FLUSHED
    assert caller_keeps_denormals()
