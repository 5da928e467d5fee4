"""``PlacementInspector``: the live view of a placement document in a notebook.

The ``document`` trait holds a whole document (what the view starts from, and what a Trace shown
after the fact is); ``watch`` streams sessions' runs into the view as they happen.
"""

from __future__ import annotations

import time
from typing import Any

import ipywidgets
import traitlets

from placeviz.events.trace import Trace
from placeviz.inspector.stream import LiveStream
from placeviz.runtime.session import Session

MODULE = "placeviz"
MODULE_VERSION = "^0.1.0"


class PlacementInspector(ipywidgets.DOMWidget):
    """The graph coloured by where each op ran, with memory, timing and why each op went there."""

    _model_name = traitlets.Unicode("PlacementInspectorModel").tag(sync=True)
    _view_name = traitlets.Unicode("PlacementInspectorView").tag(sync=True)
    _model_module = traitlets.Unicode(MODULE).tag(sync=True)
    _view_module = traitlets.Unicode(MODULE).tag(sync=True)
    _model_module_version = traitlets.Unicode(MODULE_VERSION).tag(sync=True)
    _view_module_version = traitlets.Unicode(MODULE_VERSION).tag(sync=True)
    document = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(self, trace: Trace | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._stream: LiveStream | None = None
        if trace is not None:
            self.document = trace.to_document()

    def watch(self, session: Session, max_rate: float = 20.0) -> LiveStream:
        """Stream ``session``'s runs into this view from now on (at most ``max_rate`` updates
        a second); more sessions can be watched by the same stream with ``stream.watch``."""
        if self._stream is None:
            origin = time.perf_counter_ns()  # the clock the runtime's events are stamped with
            self._stream = LiveStream(self.send, origin_ns=origin, max_rate=max_rate)
        self._stream.watch(session)
        return self._stream

    def stop(self) -> None:
        """Send what is queued and stop streaming."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
