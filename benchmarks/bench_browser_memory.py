"""Whether a long loop stays light in the browser: JS heap and update cost per batch, flat.

A 1,000-run loop (four towers of small dense layers on four simulated GPUs, summed on the CPU) is
streamed through the kernel's own ``LiveStream`` (placeviz/inspector/stream.py), the messages a
live widget receives, into the standalone inspector page in headless Debian chromium
(``/usr/bin/chromium`` via Playwright; never a downloaded browser). The page applies each message
with ``placeviz.renderLive(...).apply``, which is the widget's own path (``applyMessage``: the
binary columns decoded by ``decodeBatch``, the store appended, the views updated once per frame).
No JupyterLab or kernel runs here: only the transport differs (Playwright instead of a comm).

Two ways of streaming:

- ``every-run`` (default, the heavy case): the stream is flushed after each run, so every run's
  events reach the browser (a real kernel throttles to 20 updates a second and skips the events of
  all but the newest run, so it sends far fewer);
- ``live``: the stream's own ticker (20 updates a second) while the loop runs, as in a notebook;
  each run is followed by ``--pause-ms`` of other work (a training step's data loading), so the
  loop lasts long enough for the ticker to send more than a handful of updates.

``--full-trace`` runs with ``RunOptions.FULL_TRACE``, so ALLOC/FREE events feed the memory panel.

After 100 runs and after the last run it reads, through the Chrome DevTools Protocol:

- ``heap``: ``JSHeapUsedSize`` (``Performance.getMetrics``) after a forced garbage collection;
- ``buffers``: that plus the ArrayBuffers' backing stores (``Runtime.getHeapUsage``), where the
  event columns and the timeline's bars live: the JS heap alone does not count them;
- ``update``: the main thread's busy time (``TaskDuration``) for one batch, from handing the
  message over until the views have settled (throttled recomputation and plotly drawing included),
  the median over the 10 batches before that point; and the inspector's own ``data-update-ms``.

Target: the heap, buffers and busy ratios (after the last run / after 100) <= 1.2; exits 1 when
one is missed.
Run: ``python3 benchmarks/bench_browser_memory.py [--runs 1000] [--mode every-run|live]``.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _chromium import CHROMIUM, CHROMIUM_ARGS

import placeviz as pv
from placeviz.events.html import bundle
from placeviz.inspector.stream import LiveStream

TARGET_RATIO = 1.2
CHECKPOINT = 100  # runs
WINDOW = 10  # batches measured before each checkpoint
SETTLE_MS = 400  # longer than the panels' throttle window (250 ms) plus a draw
EMPTY = {"schema": "placeviz/1", "origin_ns": 0, "devices": [], "nodes": [], "edges": []}
EMPTY |= {"runs": [], "events": {}}

APPLY = """
([content, encoded]) => {
  const buffers = encoded.map((text) => {
    const raw = atob(text);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return new DataView(bytes.buffer);
  });
  window.__live.apply(content, buffers);
  return new Promise((resolve) => requestAnimationFrame(() => resolve(null)));
}
"""


def build_loop(gpus: int = 4, layers: int = 3) -> tuple[pv.Session, Any]:
    """Four towers of `layers` dense layers, one per simulated GPU, summed on the CPU."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus)
    pv.reset_default_graph()
    with pv.device("/cpu:0"):
        x = pv.constant(np.ones((8, 16), np.float32), name="x")
    outs = []
    for g in range(gpus):
        with pv.device(f"/gpu:{g}"), pv.name_scope(f"tower_{g}"):
            h = x
            for layer in range(layers):
                w = pv.constant(np.full((16, 16), 0.01, np.float32), name=f"w{layer}")
                h = pv.nn.relu(pv.matmul(h, w), name=f"layer{layer}")
            outs.append(pv.reduce_sum(h, name="loss"))
    with pv.device("/cpu:0"):
        total = pv.add_n(outs, name="total")
    return pv.Session(), total


def stream_loop(
    runs: int, mode: str, pause_ms: float = 0.0, full_trace: bool = False
) -> tuple[list[tuple[dict[str, Any], list[str]]], list[int]]:
    """The messages a live view gets while the loop runs, and after each message how many runs
    had ended."""
    sess, total = build_loop()
    options = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE) if full_trace else None
    messages: list[tuple[dict[str, Any], list[str]]] = []
    ran = [0]
    ended: list[int] = []

    def send(content: dict[str, Any], buffers: list[memoryview]) -> None:
        encoded = [base64.b64encode(bytes(b)).decode("ascii") for b in buffers]
        messages.append((content, encoded))
        ended.append(ran[0])

    rate = 20.0 if mode == "live" else 1e-6  # every-run: the ticker never fires; we flush
    stream = LiveStream(send, origin_ns=time.perf_counter_ns(), max_rate=rate)
    stream.watch(sess)
    for _ in range(runs):
        sess.run(total, options=options)
        ran[0] += 1
        if mode == "every-run":
            stream.flush()
        elif pause_ms:
            time.sleep(pause_ms / 1000)
    ran[0] = runs
    stream.close()
    return messages, ended


def metrics(cdp: Any) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def heap_mb(cdp: Any) -> tuple[float, float]:
    """The JS heap in use after a garbage collection, and that plus the ArrayBuffers' backing
    stores (typed arrays live outside the JS heap: ``JSHeapUsedSize`` leaves them out)."""
    cdp.send("HeapProfiler.collectGarbage")
    heap = metrics(cdp)["JSHeapUsedSize"]
    usage = cdp.send("Runtime.getHeapUsage")
    return heap / 2**20, (heap + usage.get("backingStorageSize", 0)) / 2**20


def measure(messages: list, ended: list[int], runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    checkpoints = {CHECKPOINT: None, runs: None}
    # The message after which each checkpoint's runs had all ended (the first such one).
    last_of = {c: next(i for i, n in enumerate(ended) if n >= c) for c in checkpoints}
    measured = {i for last in last_of.values() for i in range(last - WINDOW + 1, last + 1)}
    results: dict[str, Any] = {"messages": len(messages)}
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "live.html"
        page_path.write_text(
            '<!doctype html><html><body style="width:1300px"><div id="host"></div>'
            f"<script>{bundle()}</script></body></html>",
            encoding="utf-8",
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(page_path.as_uri())
            page.evaluate(
                "(doc) => { window.__live = window.placeviz.renderLive("
                "document.getElementById('host'), doc); }",
                EMPTY,
            )
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
            root = page.locator(".placeviz-inspector")
            busy: dict[int, list[float]] = {c: [] for c in checkpoints}
            own: dict[int, list[float]] = {c: [] for c in checkpoints}
            started = time.perf_counter()
            for i, message in enumerate(messages):
                if i in measured:
                    page.wait_for_timeout(SETTLE_MS)  # the previous batch's work has finished
                    before = metrics(cdp)["TaskDuration"]
                    page.evaluate(APPLY, list(message))
                    page.wait_for_timeout(SETTLE_MS)
                    spent = (metrics(cdp)["TaskDuration"] - before) * 1000
                    checkpoint = min(c for c in checkpoints if last_of[c] >= i)
                    busy[checkpoint].append(spent)
                    own[checkpoint].append(float(root.get_attribute("data-update-ms") or "nan"))
                else:
                    page.evaluate(APPLY, list(message))
                for checkpoint, last in last_of.items():
                    if i == last:
                        checkpoints[checkpoint] = heap_mb(cdp)
            results["feed_s"] = time.perf_counter() - started
            results["events"] = int(root.get_attribute("data-events") or 0)
            results["dropped"] = int(root.get_attribute("data-dropped-events") or 0)
            results["skipped"] = int(root.get_attribute("data-skipped-events") or 0)
            results["bars"] = int(page.locator(".placeviz-timing").get_attribute("data-bars") or 0)
            browser.close()
    results["heap_mb"] = {c: v[0] for c, v in checkpoints.items()}
    results["buffers_mb"] = {c: v[1] for c, v in checkpoints.items()}
    results["busy_ms"] = {c: statistics.median(v) for c, v in busy.items()}
    results["update_ms"] = {c: statistics.median(v) for c, v in own.items()}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--mode", choices=["every-run", "live"], default="every-run")
    parser.add_argument("--pause-ms", type=float, default=5.0, help="live mode: pause per run")
    parser.add_argument("--full-trace", action="store_true", help="record ALLOC/FREE events too")
    args = parser.parse_args()
    if args.runs <= CHECKPOINT:
        parser.error(f"--runs must be more than {CHECKPOINT}")
    messages, ended = stream_loop(args.runs, args.mode, args.pause_ms, args.full_trace)
    r = measure(messages, ended, args.runs)
    print(
        f"mode {args.mode}{' full trace' if args.full_trace else ''}: {args.runs} runs, "
        f"{r['messages']} messages, {r['events']:,} events "
        f"held in the browser ({r['dropped']:,} dropped, {r['skipped']:,} not streamed), "
        f"{r['bars']:,} op bars; fed in {r['feed_s']:.1f} s"
    )
    ok = True
    figures = (("heap_mb", "MiB"), ("buffers_mb", "MiB"), ("busy_ms", "ms"), ("update_ms", "ms"))
    for name, unit in figures:
        at = r[name]
        ratio = at[args.runs] / at[CHECKPOINT] if at[CHECKPOINT] else float("inf")
        checked = name != "update_ms"  # the inspector's own figure is shown, not judged
        verdict = ("ok" if ratio <= TARGET_RATIO else "MISSED") if checked else "(info)"
        ok &= ratio <= TARGET_RATIO or not checked
        print(
            f"  {name:10s} after {CHECKPOINT} runs {at[CHECKPOINT]:8.2f} {unit}, after "
            f"{args.runs} runs {at[args.runs]:8.2f} {unit}: ratio {ratio:.2f} {verdict}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
