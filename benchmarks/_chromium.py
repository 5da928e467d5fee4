"""The headless browser the browser benchmarks drive: Debian's chromium, never a downloaded one.

tests/e2e/conftest.py keeps its own copy of these flags: pytest does not put the repository root
on ``sys.path``, so the tests cannot import this module without a path hack.
"""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
