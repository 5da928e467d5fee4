"""Screenshots of the whole inspector on the golden programs, to look at as a teacher would.

Each program of ``placeviz.examples.documents`` (and the 4-layer training step) is written as a
standalone page and photographed in headless Debian chromium at 1,400 px wide, after its first
paint and the panels' plots. Not a test: the pictures are for eyes (README, docs/images).
Run: ``python3 benchmarks/screenshot_inspector.py [--out docs/images] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _chromium import CHROMIUM, CHROMIUM_ARGS
from playwright.sync_api import sync_playwright

from placeviz.events.html import write_html
from placeviz.examples.documents import GOLDEN, training_step

PROGRAMS = {**GOLDEN, "training-step": training_step}
PAINTED = '.placeviz-inspector[data-first-paint-ms]:not([data-first-paint-ms=""])'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", default=sorted(PROGRAMS))
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pages = Path(tempfile.mkdtemp(prefix="placeviz-shots-"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for name in args.names:
            html = pages / f"{name}.html"
            write_html(PROGRAMS[name]().to_document(), html)
            page.goto(html.as_uri())
            page.wait_for_selector(PAINTED, state="attached")
            page.wait_for_selector(".placeviz-timing .main-svg", timeout=30_000)
            page.wait_for_timeout(500)  # the plots' second frame
            shot = args.out / f"inspector-{name}.png"
            page.locator(".placeviz-inspector").screenshot(path=str(shot))
            print(f"wrote {shot}")
        browser.close()


if __name__ == "__main__":
    main()
