"""How long the standalone inspector takes to show a big graph: 10,000 and 100,000 ops.

Builds real placeviz graphs (four towers of small dense layers on four simulated GPUs, summed on
the CPU), runs them once, writes each run's placement document as a standalone page
(``write_html``) and opens it in headless Debian chromium (``/usr/bin/chromium``, via Playwright;
never a downloaded browser). For each size it prints:

- ``first paint``: the renderer's own ``data-first-paint-ms`` (host start to the first complete
  DAG paint),
- ``navigation``: from navigation start to that attribute appearing (``performance.now()`` in the
  page, so page load and JSON parsing count),
- ``wall``: the same seen from Python (``goto`` to the attribute), Playwright's overhead included.

Targets: first paint and navigation <= 1500 ms at 10,000 ops, <= 5000 ms at 100,000. Exits 1 when
a target is missed. Run: ``python3 benchmarks/bench_first_paint.py [--sizes 10000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _chromium import CHROMIUM, CHROMIUM_ARGS

import placeviz as pv

TARGETS_MS = {10_000: 1500.0, 100_000: 5000.0}
GPUS = 4
# The root carries data-first-paint-ms="" from the start; the paint fills it in.
PAINTED = '.placeviz-inspector[data-first-paint-ms]:not([data-first-paint-ms=""])'
# Records when the first paint's time appears, in the page's own clock.
WATCH = """
(() => {
  const seen = () => {
    const root = document.querySelector('PAINTED');
    if (root && window.__placevizPaintSeen === undefined) {
      window.__placevizPaintSeen = performance.now();
    }
    return root !== null;
  };
  new MutationObserver(seen).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ['data-first-paint-ms'],
  });
})();
""".replace("PAINTED", PAINTED)


def write_html(document: dict[str, Any], path: Path) -> None:
    """The lead's standalone writer, wherever this checkout has it."""
    try:
        from placeviz.events.html import write_html as writer
    except ImportError:  # pragma: no cover - an older layout
        from placeviz.inspector.html import write_html as writer
    writer(document, path)


def build_document(ops: int) -> dict[str, Any]:
    """A run of a graph of exactly ``ops`` ops, as a placement document."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(GPUS)
    pv.reset_default_graph()
    fixed = 2 + GPUS * 2  # input and sum on the CPU; a weight and a bias per tower
    layers = (ops - fixed) // (3 * GPUS)  # matmul, add, relu per layer and tower
    if layers < 1:
        raise ValueError(f"{ops} ops is too few for {GPUS} towers")
    with pv.device("/cpu:0"):
        x = pv.constant(np.ones((4, 4), np.float32), name="input")
    towers = []
    for g in range(GPUS):
        with pv.device(f"/gpu:{g}"), pv.name_scope(f"tower{g}"):
            w = pv.constant(np.eye(4, dtype=np.float32) * 0.5, name="w")
            bias = pv.constant(0.1, name="bias")
            h = x
            for i in range(layers):
                with pv.name_scope(f"layer{i}"):
                    h = pv.nn.relu(pv.matmul(h, w) + bias)
            towers.append(h)
    with pv.device("/cpu:0"):
        total = pv.add_n(towers)
        for _ in range(ops - fixed - 3 * GPUS * layers):  # pad to the exact count
            total = pv.identity(total)
    graph = pv.get_default_graph()
    assert len(graph.get_operations()) == ops
    sess = pv.Session()
    sess.run(total)
    return sess.trace().to_document()


def measure(context: Any, path: Path, timeout_ms: float) -> tuple[float, float, float]:
    """(first paint, navigation to attribute, Python wall) in ms for one fresh load of ``path``."""
    page = context.new_page()
    try:
        page.add_init_script(WATCH)
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="commit", timeout=timeout_ms)
        page.wait_for_selector(PAINTED, state="attached", timeout=timeout_ms)
        wall = (time.perf_counter() - start) * 1e3
        paint = float(page.get_attribute(".placeviz-inspector", "data-first-paint-ms") or "nan")
        navigation = float(page.evaluate("() => window.__placevizPaintSeen ?? NaN"))
        return paint, navigation, wall
    finally:
        page.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=sorted(TARGETS_MS))
    parser.add_argument("--repeat", type=int, default=3, help="page loads per size (median)")
    parser.add_argument("--keep", type=Path, help="write the pages here instead of a temp dir")
    parser.add_argument(
        "--validate", action="store_true", help="check each document against the schema first"
    )
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("needs the playwright package: pip install -e '.[test]'", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).exists():
        print(f"needs {CHROMIUM}: apt-get install chromium", file=sys.stderr)
        return 2
    out = args.keep or Path(tempfile.mkdtemp(prefix="placeviz-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    pages: dict[int, Path] = {}
    for ops in args.sizes:
        start = time.perf_counter()
        document = build_document(ops)
        built = time.perf_counter() - start
        if args.validate:
            from placeviz.events.document import validate

            validate(document)
        pages[ops] = out / f"first-paint-{ops}.html"
        write_html(document, pages[ops])
        size_mb = pages[ops].stat().st_size / 1e6
        print(
            f"{ops:>7} ops: built and ran in {built:.1f} s, {len(document['events']['kind'])} "
            f"events, page {size_mb:.1f} MB"
        )
    failed = False
    with sync_playwright() as playwright:
        profile = tempfile.mkdtemp(prefix="placeviz-bench-chromium-")
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            for ops, path in pages.items():
                target = TARGETS_MS.get(ops)
                timeout = max(60_000.0, 10 * (target or 0))
                runs = [measure(context, path, timeout) for _ in range(args.repeat)]
                paint, navigation, wall = (statistics.median(r[i] for r in runs) for i in range(3))
                verdict = ""
                if target is not None:
                    marks = [
                        f"{name} {'ok' if value <= target else 'MISSED'}"
                        for name, value in (("first paint", paint), ("navigation", navigation))
                    ]
                    failed |= max(paint, navigation) > target
                    verdict = f"  target <= {target:.0f} ms: {', '.join(marks)}"
                print(
                    f"{ops:>7} ops: first paint {paint:8.1f} ms, navigation {navigation:8.1f} ms, "
                    f"wall {wall:8.1f} ms (median of {len(runs)}){verdict}"
                )
        finally:
            context.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
