"""A ``%%placement`` cell's output in a kernel: what it prints, its live inspector, a saved copy.

Three display slots, made in this order when the cell starts:

- text: what the cell prints (stdout, and stderr, where the placement log goes). A front end
  appends stream output after whatever is displayed, so printed text would land under the
  inspector; it is captured instead and shown in this slot, above it.
- inspector: the live ``PlacementInspector``, replaced by the final document (same display id)
  when the cell ends, so the saved notebook shows the inspector without a kernel.
- saved: the document the inspector has been sent so far, renewed every few seconds while the
  cell runs, so that a notebook saved after the kernel died mid-cell still holds it (the widget's
  state dies with the kernel). It names the live widget's model, and the front end shows it only
  when that widget is not on the page. It is emptied when the cell ends.

Text is captured for the cell's own context only (``contextvars``): a cell running in another
thread beside it prints into its own output.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from IPython.display import display

from placeviz.contract import RUNS_LISTED, SHOWN_EVENTS
from placeviz.events.html import MIME_TYPE, output_bundle
from placeviz.events.trace import Trace
from placeviz.inspector.summary import summary_text
from placeviz.inspector.widget import PlacementInspector
from placeviz.runtime.session import Session

TEXT_INTERVAL_S = 0.25  # printed text reaches the page this often at most...
TEXT_RATE = 1_000_000  # ...and, as each update carries it all, at this many characters a second
SAVE_INTERVAL_S = 2.0  # the saved copy is renewed this often at most...
SAVE_SHARE = 0.1  # ...and takes at most this share of the cell's time

# The output of the cell running in this context, which its printed text goes to.
_PRINTING_TO: contextvars.ContextVar[CellOutput | None] = contextvars.ContextVar(
    "placeviz_cell_output", default=None
)


class CellOutput:
    """The cell's output slots; ``shown`` says which session the output shows now."""

    def __init__(self, shown: Callable[[], Session | None]) -> None:
        self._shown = shown
        self.inspector = PlacementInspector()
        self._lock = threading.Lock()
        self._text: list[str] = []
        self._text_sent = ""
        self._next_text = 0.0
        self._saved_key: tuple[int, int] | None = None
        self._next_save = time.monotonic() + SAVE_INTERVAL_S
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        self._text_slot = display({}, raw=True, display_id=True)
        self._inspector_slot = display(self.inspector, display_id=True)
        self._saved_slot = display({}, raw=True, display_id=True)

    def watch(self, session: Session) -> None:
        self.inspector.watch(session)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """While inside: the caller's printed text goes to the text slot, and both the text and
        the saved copy are renewed by a thread of the caller's context (its parent message)."""
        token = _PRINTING_TO.set(self)
        routes = _Route(sys, "stdout"), _Route(sys, "stderr")
        self._refresher = threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._refresh,),
            name="placeviz-cell-output",
            daemon=True,
        )
        self._refresher.start()
        try:
            yield
        finally:
            _PRINTING_TO.reset(token)
            for route in routes:
                route.remove()
            self._stop.set()
            self._refresher.join()
            self._send_text()

    def write(self, text: str) -> None:
        with self._lock:
            self._text.append(text)

    def finish(self, session: Session | None, trace: Trace | None) -> None:
        """Replace the live view by the final document, which the notebook keeps, and empty the
        saved copy; ``trace`` is the session's whole trace when the cell already made it."""
        self.inspector.stop()
        if session is None:
            bundle = {"text/plain": "no session ran"}
        else:
            shown = shown_trace(session, trace)
            bundle = output_bundle(shown.to_document(), summary_text(shown))
        self._inspector_slot.update(bundle, raw=True)
        self._saved_slot.update({}, raw=True)
        self.inspector.close()

    def _refresh(self) -> None:
        while not self._stop.wait(TEXT_INTERVAL_S):
            if time.monotonic() >= self._next_text:
                self._send_text()
            if time.monotonic() >= self._next_save:
                self._save()

    def _send_text(self) -> None:
        with self._lock:
            text = "".join(self._text)
            self._text = [text]
        if text != self._text_sent:
            self._text_slot.update({"text/plain": as_shown(text)}, raw=True)
            self._text_sent = text
            self._next_text = time.monotonic() + len(text) / TEXT_RATE

    def _save(self) -> None:
        session = self._shown()
        key = None if session is None else (id(session), len(session.recorder))
        if session is None or key == self._saved_key:
            return
        started = time.monotonic()
        try:
            shown = shown_trace(session, None)
            # The copy kept only for a kernel that dies: no HTML (it would take the bundle
            # from the cell's final output)
            bundle = output_bundle(shown.to_document(), summary_text(shown), html=False)
        except (RuntimeError, IndexError, ValueError):
            # Read beside the cell's thread without stopping its runs, the session's records can
            # be met mid-change (a deque mutated while iterated); the next tick tries again.
            return
        metadata = {MIME_TYPE: {"live_model": self.inspector.model_id}}
        self._saved_slot.update(bundle, raw=True, metadata=metadata)
        self._saved_key = key
        took = time.monotonic() - started
        self._next_save = time.monotonic() + max(SAVE_INTERVAL_S, took / SAVE_SHARE)


def as_shown(text: str) -> str:
    """``text`` as a terminal (and a notebook's stream output) shows it: a carriage return starts
    its line over, so a progress bar redrawn in place shows its last state only."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return "\n".join(line[line.rfind("\r") + 1 :] for line in lines)


def shown_trace(session: Session, whole: Trace | None) -> Trace:
    """What the cell's output keeps: every run (``whole``, made here if not given), or, for long
    loops, the latest run in full and the records of the runs before it."""
    if len(session.recorder) <= SHOWN_EVENTS:
        return whole if whole is not None else session.trace(runs=None)
    trace = session.trace(runs=1)
    trace.runs = session.latest_runs(RUNS_LISTED)
    return trace


class _Route:
    """In place of ``sys.stdout`` (or stderr): text written in a cell's context goes to its
    output, all other text to the stream it replaced."""

    def __init__(self, module: Any, name: str) -> None:
        self._module, self._name = module, name
        self.stream: TextIO = getattr(module, name)
        setattr(module, name, self)

    def write(self, text: str) -> int:
        output = _PRINTING_TO.get()
        if output is None:
            return self.stream.write(text)
        output.write(text)
        return len(text)

    def flush(self) -> None:
        if _PRINTING_TO.get() is None:
            self.stream.flush()

    def remove(self) -> None:
        """Put the stream back, unless another cell's route replaced this one since (this one
        then stays, passing its text on)."""
        if getattr(self._module, self._name) is self:
            setattr(self._module, self._name, self.stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
