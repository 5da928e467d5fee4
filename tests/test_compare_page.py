"""pv.compare's what a what-if did not model, and Comparison.to_html: one self-contained page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import placeviz as pv
from placeviz.events.compare import COMPARE_MIME_TYPE, NOT_MODELED
from placeviz.events.html import BundleMissingError, bundle


def traced_step() -> pv.Trace:
    pv.config.simulate_gpus(2)
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [64, 64], name="x")
        with pv.device("/gpu:0"):
            a = pv.matmul(x, x, name="a")
        with pv.device("/gpu:1"):
            b = pv.nn.relu(a, name="b")
    session = pv.Session(graph=graph)
    full = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    session.run(b, {x: np.ones((64, 64), np.float32)}, options=full)
    return session.trace()


def test_a_what_if_peak_memory_is_not_modeled_never_zero() -> None:
    trace = traced_step()
    comparison = pv.compare(trace, trace.what_if({"b": "/gpu:0"}), labels=("run", "what if"))
    document = comparison.to_document()
    peaks = {
        d["device"].rsplit(":", 2)[-2] + ":" + d["device"][-1]: d["peak_bytes"]
        for d in document["devices"]
    }
    assert all(p[0] is not None and p[0] > 0 for name, p in peaks.items() if "GPU" in name)
    assert all(p[1] is None for p in peaks.values()), peaks
    text = repr(comparison)
    assert NOT_MODELED in text
    assert not re.search(r"→0 B", text), text


def test_to_html_writes_one_self_contained_page(tmp_path: Path) -> None:
    try:
        bundle()
    except BundleMissingError as error:
        pytest.skip(str(error))
    trace = traced_step()
    comparison = pv.compare(trace, trace.what_if({"b": "/gpu:0"}), labels=("run", "what if"))
    path = tmp_path / "compare.html"
    comparison.to_html(path)
    page = path.read_text("utf-8")
    assert page.count(f'<script type="{COMPARE_MIME_TYPE}"') == 1
    assert "<title>placeviz · run vs what if</title>" in page
    data = re.search(
        rf'<script type="{re.escape(COMPARE_MIME_TYPE)}"[^>]*>(.*?)</script>', page, re.S
    )
    assert data is not None
    assert json.loads(data.group(1)) == json.loads(json.dumps(comparison.to_document()))
    assert "default-src 'none'" in page  # the page may fetch nothing (the e2e test opens it)
