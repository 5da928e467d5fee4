"""A placement document as one self-contained HTML page: the inspector bundle and the data inline.

An export like ``chrome.py``; the bundle is the browser side's build
(``labextension/src/hosts/standalone.ts``), shipped as package data of ``placeviz.inspector``.

The document travels as JSON inside a ``<script type="application/vnd.placeviz+json">``; every
``<``, ``>`` and ``&`` in it is written as a JSON escape, so no op name can close the element or
open another, and the page makes no network request.
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache
from importlib import resources
from typing import Any

MIME_TYPE = "application/vnd.placeviz+json"
BUNDLE = "placeviz-inspector.js"

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<title>{title}</title>
</head>
<body>
<script type="{mime}" id="placeviz-document">{data}</script>
<script>{bundle}</script>
</body>
</html>
"""


# Nothing may load from anywhere: the page is one file, and the data in it is untrusted.
_POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


class BundleMissingError(RuntimeError):
    """The browser bundle was not built (an install without npm, or a source checkout)."""


@cache
def bundle() -> str:
    path = resources.files("placeviz").joinpath("inspector", "static", BUNDLE)
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        raise BundleMissingError(
            f"placeviz's inspector bundle ({BUNDLE}) is not built; install placeviz with pip, "
            "which runs `npm run build` in labextension/, or run it yourself"
        ) from None


def script_json(document: dict[str, Any]) -> str:
    """JSON that is safe inside a script element (and still parses to the same document)."""
    text = json.dumps(document, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def document_html(
    document: dict[str, Any], title: str = "placeviz inspector", mime: str = MIME_TYPE
) -> str:
    """The page of a document of type ``mime``: a placement document, or a comparison's
    (``application/vnd.placeviz.compare+json``), which the bundle draws side by side."""
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _PAGE.format(
        policy=_POLICY,
        title=safe_title,
        mime=mime,
        data=script_json(document),
        bundle=_inline_bundle(),
    )


@cache
def _inline_bundle() -> str:
    """The bundle as a script's text, which must not contain a closing tag of its own."""
    return bundle().replace("</script", "<\\/script")


# A notebook output's HTML: the document, a note shown until a script renders it, and either the
# bundle (which renders every document on the page) or a line asking an earlier bundle to.
_OUTPUT = (
    '<script type="{mime}">{data}</script>'
    '<div class="placeviz-waiting" style="font-family:sans-serif;color:#666">placeviz inspector: '
    "it draws here where a notebook's outputs may run scripts (JupyterLab with placeviz, VS Code, "
    "an nbconvert HTML export); its script comes with the first inspector output of the "
    "notebook's run.</div>"
    "<script>{script}</script>"
)
_RENDER = "window.placeviz && window.placeviz.renderAll(document);"
_embedded = False  # whether this process gave an output the bundle already


def output_html(document: dict[str, Any]) -> str | None:
    """The ``text/html`` of an inspector output, for front ends without placeviz's renderer:
    the bundle (1.3 MB) goes in the process's first such output only, and the later ones render
    with it (in Colab, whose outputs are pages of their own, every output carries it); None where
    the bundle was not built."""
    global _embedded
    try:
        shared_page = "google.colab" not in sys.modules  # Colab puts each output in its own frame
        script = _RENDER if _embedded and shared_page else _inline_bundle()
    except BundleMissingError:
        return None
    _embedded = True
    return _OUTPUT.format(mime=MIME_TYPE, data=script_json(document), script=script)


def output_bundle(document: dict[str, Any], text: str, html: bool = True) -> dict[str, Any]:
    """What a notebook output of the inspector carries: the document for placeviz's renderer
    (JupyterLab and Notebook 7 prefer it), its HTML for other front ends (unless ``html`` is
    False), and ``text``."""
    page = output_html(document) if html else None
    return {MIME_TYPE: document, "text/plain": text, **({"text/html": page} if page else {})}


def write_html(
    document: dict[str, Any],
    path: str | os.PathLike[str],
    title: str = "placeviz inspector",
    mime: str = MIME_TYPE,
) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(document_html(document, title, mime))
