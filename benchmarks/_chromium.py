"""The headless browser the browser tests and benchmarks drive: Debian's chromium, never a
downloaded one (tests/e2e imports it as ``benchmarks._chromium``: pytest's ``pythonpath``)."""

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
