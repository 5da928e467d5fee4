"""An inspector output's ``text/html``: the inspector for front ends without placeviz's renderer
(VS Code, Colab, nbconvert exports), with the bundle once per process and untrusted text inert."""

from __future__ import annotations

import re
import sys
import types

import pytest

import placeviz as pv
from placeviz.events import html
from placeviz.events.html import MIME_TYPE, bundle


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has not embedded the bundle yet (skips where it was not built)."""
    try:
        bundle()
    except html.BundleMissingError:
        pytest.skip("the inspector bundle is not built (npm run build in labextension/)")
    monkeypatch.setattr(html, "_embedded", False)


def test_without_a_built_bundle_an_output_has_no_html(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> str:
        raise html.BundleMissingError("not built")

    monkeypatch.setattr(html, "_inline_bundle", missing)
    monkeypatch.setattr(html, "_embedded", False)
    assert set(evil_trace()._repr_mimebundle_()) == {MIME_TYPE, "text/plain"}


def evil_trace() -> pv.Trace:
    name = "x</script><img src=x onerror=alert(1)>"
    c = pv.constant([1.0, 2.0], name="x")
    sess = pv.Session()
    sess.run(pv.identity(c, name="y"))
    trace = sess.trace()
    for node in trace.nodes:
        node["name"] = name  # as a saved document could say
    return trace


def test_the_first_output_carries_the_bundle_and_later_ones_use_it(fresh_process) -> None:
    trace = evil_trace()
    first = trace._repr_mimebundle_()
    second = trace._repr_mimebundle_()
    assert set(first) == {MIME_TYPE, "text/plain", "text/html"}
    code = bundle()
    assert len(first["text/html"]) > len(code) // 2  # the bundle, inline
    assert len(second["text/html"]) < 100_000  # the document and one line of script
    assert "window.placeviz.renderAll(document)" in second["text/html"]
    for page in (first["text/html"], second["text/html"]):
        assert page.count('<script type="application/vnd.placeviz+json">') == 1
        assert "placeviz-waiting" in page  # what shows until a script renders it


def test_untrusted_names_cannot_close_the_document_script(fresh_process) -> None:
    page = evil_trace()._repr_mimebundle_()["text/html"]
    document = re.search(r'<script type="application/vnd\.placeviz\+json">(.*?)</script>', page)
    assert document is not None
    assert "<img" not in document.group(1) and "\\u003cimg" in document.group(1)
    assert "<img" not in page.split("</script>", 1)[0]


def test_in_colab_every_output_carries_the_bundle(
    fresh_process, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    trace = evil_trace()
    pages = [trace._repr_mimebundle_()["text/html"] for _ in range(2)]
    assert all(len(page) > len(bundle()) // 2 for page in pages)
