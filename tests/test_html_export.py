"""The standalone HTML export: the document inline and inert, whatever text it carries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import placeviz as pv
from placeviz.events import html

HOSTILE = "</script><img src=x onerror=alert(1)>&\u2028"


def _document() -> dict:
    pv.reset_default_graph()
    session = pv.Session()
    session.run(pv.constant(1.0) + 2.0)
    document = session.trace().to_document()
    document["runs"][0]["error"] = HOSTILE  # run errors carry arbitrary user text
    return document


def test_the_document_is_escaped_for_a_script_element_and_parses_back() -> None:
    document = _document()
    text = html.script_json(document)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == document


def test_a_page_holds_one_inert_document_and_the_bundle(tmp_path: Path) -> None:
    try:
        html.bundle()
    except html.BundleMissingError:
        pytest.skip("the inspector bundle is not built (npm run build in labextension/)")
    path = tmp_path / "trace.html"
    document = _document()
    html.write_html(document, path, title="<b>t</b>")
    page = path.read_text("utf-8")
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<img" not in page.replace(html.bundle(), "")
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page
    assert "default-src 'none'" in page  # the page may load nothing
    inline = re.search(r'<script type="application/vnd.placeviz\+json"[^>]*>(.*?)</script>', page)
    assert inline is not None and json.loads(inline.group(1)) == document


def test_a_missing_bundle_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    html.bundle.cache_clear()
    monkeypatch.setattr(html, "BUNDLE", "no-such-bundle.js")
    try:
        with pytest.raises(html.BundleMissingError, match="npm run build"):
            html.bundle()
    finally:
        html.bundle.cache_clear()


def test_a_trace_shows_as_the_inspector_in_a_notebook() -> None:
    pv.reset_default_graph()
    session = pv.Session()
    session.run(pv.constant([1.0, 2.0]) * 3.0)
    bundle = session.trace()._repr_mimebundle_()
    assert bundle[html.MIME_TYPE]["schema"] == "placeviz/1"
    assert bundle["text/plain"].startswith("<pv.Trace 1 run(s)")
