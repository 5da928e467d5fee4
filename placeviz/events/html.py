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


def document_html(document: dict[str, Any], title: str = "placeviz inspector") -> str:
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # The bundle is a script's text: it must not contain a closing tag of its own.
    code = bundle().replace("</script", "<\\/script")
    return _PAGE.format(
        policy=_POLICY, title=safe_title, mime=MIME_TYPE, data=script_json(document), bundle=code
    )


def write_html(
    document: dict[str, Any], path: str | os.PathLike[str], title: str = "placeviz inspector"
) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(document_html(document, title))
