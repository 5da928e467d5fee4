"""Denormal floats flushed to zero while kernels run, as in TensorFlow: its CPU thread pools set
the processor's flush-to-zero and denormals-are-zero flags, so that ``x * 1.0`` of a float32
``1e-39`` is 0 there, and a value that underflows below the smallest normal float becomes 0.
Beyond giving TensorFlow's values, this keeps long training loops fast: arithmetic on denormals
costs tens of times more on x86, and Adam's moments of a weight that stops learning decay into
them within a thousand steps.

Set per thread through glibc's ``fesetmode`` on x86-64 Linux (MXCSR's two flags); a no-op
elsewhere. A run's calling thread gets its own modes back when the run ends, so the user's NumPy
code outside runs keeps IEEE denormals.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from types import TracebackType

_FLUSH_BITS = 0x8040  # MXCSR: flush-to-zero (bit 15), denormals-are-zero (bit 6)


class _Modes(ctypes.Structure):
    """glibc's ``femode_t`` on x86-64."""

    _fields_ = [
        ("control_word", ctypes.c_ushort),
        ("reserved", ctypes.c_ushort),
        ("mxcsr", ctypes.c_uint),
    ]


def _libm() -> ctypes.CDLL | None:
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return None
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
        libm = ctypes.CDLL("libm.so.6")  # glibc's soname
    except (OSError, ValueError):
        return None
    return libm if hasattr(libm, "fegetmode") and hasattr(libm, "fesetmode") else None


_LIBM = _libm()


def _flush() -> _Modes:
    """Sets this thread's flags; its modes before."""
    assert _LIBM is not None
    before = _Modes()
    _LIBM.fegetmode(ctypes.byref(before))
    flushing = _Modes(before.control_word, 0, before.mxcsr | _FLUSH_BITS)
    _LIBM.fesetmode(ctypes.byref(flushing))
    return before


def flush_in_this_thread() -> None:
    """For a thread of placeviz's own that runs kernels and nothing else (a stream worker)."""
    if _LIBM is not None:
        _flush()


class Flushed:
    """Denormals flush to zero in this thread while the ``with`` block runs."""

    __slots__ = ("_saved",)

    def __enter__(self) -> None:
        if _LIBM is not None:
            self._saved = _flush()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if _LIBM is not None:
            _LIBM.fesetmode(ctypes.byref(self._saved))
