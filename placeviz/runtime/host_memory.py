"""Keep freed host memory in the process, as TensorFlow's allocator keeps its pool.

A training step frees and allocates the same large arrays every run (im2col patches, activations,
gradients). glibc serves arrays above its mmap threshold (at most 32 MiB, and lower until it has
freed one) with fresh ``mmap`` pages and returns them on ``free``, so every step pays the kernel's
page faults to zero them again: a third of a cifar10 step here. Raising the threshold and the heap
trim threshold once per process lets freed arrays be reused from the heap instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# arrays below this come from the heap; freed heap above this much at its top goes back to the OS
MMAP_THRESHOLD_BYTES = 256 << 20
TRIM_THRESHOLD_BYTES = 1 << 30

_done = False


def keep_freed_host_memory() -> bool:
    """Set glibc's thresholds once per process; False where the C library is not glibc."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
    return _done
