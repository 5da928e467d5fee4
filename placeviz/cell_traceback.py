"""What an uncaught error in a ``%%placement`` cell shows: the user's frames, from their cell on.

Without this the traceback would start at IPython's ``run_cell_magic`` and the magic, and end in
placeviz's session and executor. As TensorFlow filters its own frames from the tracebacks of its
API (``tf.debugging.disable_traceback_filtering``), placeviz's are left out after the cell; the
error's message names the op and its source line. Only what is shown changes: the exception
keeps its whole traceback, for ``%debug``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from placeviz.errors import OpError
from placeviz.graph import source


def show_from_cell(error: BaseException, cell_filename: str, shell: Any) -> None:
    """Make IPython render ``error`` from the frame of ``cell_filename`` (the compiled cell) on,
    without placeviz's frames; with none when the cell's code was not running (a syntax error,
    the cell's sink ops run after it)."""
    shown = _user_frames(error.__traceback__, cell_filename)

    # An OpError's message says what failed inside (a kernel's own error), whose frames are
    # internal: its cause and context are left out of what is shown.
    hidden = isinstance(error, OpError)

    def render() -> list[str]:
        saved = error.__cause__, error.__suppress_context__
        if hidden:
            error.__cause__, error.__suppress_context__ = None, True
        try:
            return shell.InteractiveTB.structured_traceback(type(error), error, shown, tb_offset=0)
        finally:
            error.__cause__, error.__suppress_context__ = saved

    error._render_traceback_ = render  # type: ignore[attr-defined]  (IPython's protocol)


def _user_frames(tb: TracebackType | None, cell_filename: str) -> TracebackType | None:
    """The frames of ``tb`` from the cell's on, placeviz's own left out (rebuilt innermost
    first, as traceback objects link outward-in)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != cell_filename:
        tb = tb.tb_next
    kept = []
    while tb is not None:
        if not source.is_internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    shown = None
    for entry in reversed(kept):
        shown = TracebackType(shown, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return shown
