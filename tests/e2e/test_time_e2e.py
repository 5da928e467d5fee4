"""One clock in every view, in a real browser (standalone pages, chromium): the header, the
scrubber, the axes and the document agree on each run's step; every plot's x tick labels are
distinct and no text is cut, at the page widths the browser tests use and at 600 px; a
comparison written by ``Comparison.to_html`` draws both placements on one x range."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cells import build, run_spans, towers_loop
from plotchecks import plot_problems, read_plots

import placeviz as pv

pytestmark = pytest.mark.e2e

LOOP = towers_loop(", options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)")

WIDTHS = (1400, 1300, 600)  # the browser tests' pages, and a narrow one


@pytest.fixture
def offline_page(page: Any, standalone_bundle: None) -> Iterator[Any]:
    """A tab that records every request leaving the file it shows (the page must make none)."""
    requests: list[str] = []
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:", "blob:")) else requests.append(r.url),
    )
    page.requests = requests
    yield page


def wait_for_plots(root: Any, count: int) -> None:
    root.page.wait_for_function(
        "([el, n]) => el.querySelectorAll('.placeviz-plot .main-svg').length >= n",
        arg=[root.element_handle(), count],
        timeout=30_000,
    )
    root.page.wait_for_timeout(300)  # the redraw that follows the first layout


def test_header_scrubber_axes_and_document_agree_on_each_runs_step(
    offline_page: Any, tmp_path: Path
) -> None:
    sess = build(LOOP, gpus=2)["sess"]
    trace = sess.trace(runs=None)
    document = trace.to_document()
    steps = {run: hi - lo for run, (lo, hi) in run_spans(document).items()}
    assert len(steps) == 4
    # The summary's step (what pv.compare and its summary print) is the last run's.
    assert round(trace.step_s * 1e9) == steps[3]
    comparison = pv.compare(trace, trace.what_if(), labels=("run", "what if"))
    assert comparison.to_document()["step_ns"][0] == steps[3]
    path = tmp_path / "loop.html"
    trace.to_html(path)
    page = offline_page
    page.goto(path.as_uri())
    root = page.locator(".placeviz-inspector")
    header = root.locator(".placeviz-runs")
    scrubber = root.locator(".placeviz-scrubber")
    wait_for_plots(root, 2)
    # All runs: the header names the last run's step.
    assert int(header.get_attribute("data-step-ns")) == steps[3]
    # The CPU's ops are timed by its clock, the simulated GPUs' by the model: both, said so.
    assert "(modeled and measured)" in header.inner_text()
    for run, step in steps.items():
        root.locator("select.placeviz-run").select_option(str(run))
        page.wait_for_timeout(400)
        assert header.get_attribute("data-run") == str(run)
        assert int(header.get_attribute("data-step-ns")) == step
        text = header.inner_text()
        assert re.match(
            rf"run {run + 1} of 4 · ok · step .+ \(modeled and measured\) · wall clock ", text
        ), text
        lo = float(scrubber.get_attribute("data-range-start"))
        hi = float(scrubber.get_attribute("data-range-end"))
        assert hi - lo == pytest.approx(step)
        assert float(scrubber.get_attribute("data-clock-origin")) == pytest.approx(lo)
        label = scrubber.locator(".placeviz-time-label").inner_text()
        assert label.endswith(f"since run {run + 1} started"), label
        # The axes start at 0 on the run's clock, and say which clock.
        for plot in read_plots(root):
            assert re.match(r"^0(\.0+)? (ns|µs|ms|s)$", plot["xticks"][0]), plot
        titles = root.locator(".g-xtitle text").evaluate_all("els => els.map(e => e.textContent)")
        clock = f"since run {run + 1} started (modeled and measured)"
        assert titles and all(clock in t for t in titles), titles
    assert page.problems == [] and page.requests == []


@pytest.mark.parametrize("width", WIDTHS)
def test_every_plot_has_distinct_ticks_and_no_clipped_text(
    offline_page: Any, tmp_path: Path, width: int
) -> None:
    sess = build(LOOP, gpus=2)["sess"]
    path = tmp_path / "loop.html"
    sess.trace(runs=None).to_html(path)
    page = offline_page
    page.set_viewport_size({"width": width, "height": 1400})
    page.goto(path.as_uri())
    root = page.locator(".placeviz-inspector")
    wait_for_plots(root, 2)
    for run in ("", "3"):  # all runs (gaps collapsed, four run marks), then the last
        root.locator("select.placeviz-run").select_option(run)
        page.wait_for_timeout(400)
        plots = read_plots(root)
        assert len(plots) == 2
        assert plot_problems(plots, least_ticks=3) == []
    assert page.problems == []


def training_step() -> pv.Trace:
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [256, 512], name="x")
        with pv.device("/cpu:0"):
            w = pv.Variable(pv.random_normal([512, 512], stddev=0.05), name="w")
        losses = []
        for i, half in enumerate(pv.split(x, 2)):
            with pv.device(f"/gpu:{i}"), pv.name_scope(f"tower{i}"):
                losses.append(pv.reduce_mean(pv.square(pv.matmul(half, w))))
        train = pv.train.GradientDescentOptimizer(0.1).minimize(pv.add_n(losses, name="loss"))
        init = pv.global_variables_initializer()
    session = pv.Session(graph=graph)
    session.run(init)
    full = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    session.run(train, {x: np.ones((256, 512), np.float32)}, options=full)
    return session.trace()


def test_a_comparison_page_draws_both_placements_on_one_x_range(
    offline_page: Any, tmp_path: Path, keep_screenshot: Any
) -> None:
    trace = training_step()
    predicted = trace.what_if({"tower1/MatMul": "/gpu:0"})
    comparison = pv.compare(trace, predicted, labels=("run", "what if"))
    path = tmp_path / "compare.html"
    comparison.to_html(path)
    page = offline_page
    page.set_viewport_size({"width": 1600, "height": 1400})
    page.goto(path.as_uri())
    view = page.locator(".placeviz-compare")
    expect_count = view.locator(".placeviz-inspector")
    page.wait_for_function("() => document.querySelectorAll('.placeviz-inspector').length === 2")
    assert expect_count.count() == 2
    columns = [view.locator(f".placeviz-compare-column[data-side='{i}']") for i in range(2)]
    for column in columns:
        wait_for_plots(column, 2)
    # The two timelines: one window length (the longer step's), the same ticks, 3 or more.
    windows = [
        [int(v) for v in c.locator(".placeviz-timing").get_attribute("data-window").split(",")]
        for c in columns
    ]
    assert windows[0][1] - windows[0][0] == windows[1][1] - windows[1][0]
    plots = [read_plots(c) for c in columns]
    ticks = [[p["xticks"] for p in side if "placeviz-timing" in p["panel"]] for side in plots]
    assert ticks[0] == ticks[1] and len(ticks[0]) == 1 and len(ticks[0][0]) >= 3, ticks
    # The run's memory plot reads the same ticks; the what-if, which models no memory, says so.
    memory = [p["xticks"] for p in plots[0] if "placeviz-memory" in p["panel"]]
    assert memory == ticks[0], memory
    note = columns[1].locator(".placeviz-memory .placeviz-panel-note").first
    assert note.text_content() == "Memory not modeled: a prediction models times only."
    assert plot_problems(plots[0] + plots[1], least_ticks=3) == []
    # The what-if modeled no memory: its peaks read "not modeled", never 0 B or a saving.
    rows = view.locator(".placeviz-compare-device")
    gpu = rows.filter(has_text="GPU:0").first.locator("td").all_inner_texts()
    assert gpu[-2:] == ["not modeled", "n/a"], gpu
    keep_screenshot(view, "comparison-shared-axis")
    assert page.problems == [] and page.requests == []
