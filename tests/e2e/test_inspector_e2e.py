"""The inspector in a real browser: live in JupyterLab, saved without a kernel, standalone HTML.

Every check goes through the DOM contract of docs/inspector.md; the expected numbers come from
building the same graphs with placeviz here, not from constants.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cells import build, run_spans, towers_loop
from plotchecks import plot_problems, read_plots_in_view

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.events.html import bundle as html_bundle

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
LOCAL = "/job:localhost/replica:0/task:0/device:"
MIME = "application/vnd.placeviz+json"

# The seeds' tower example (TensorFlow's GPU guide), on four GPUs.
TOWERS = """\
import placeviz as tf

c = []
for i in range(4):
    with tf.device("/gpu:%d" % i):
        a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
        b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2])
        c.append(tf.matmul(a, b))
with tf.device("/cpu:0"):
    total = tf.add_n(c)

sess = tf.Session()
# A full trace records tensor sizes (ALLOC/FREE events), which the memory panel draws.
full = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
print(sess.run(total, options=full, run_metadata=tf.RunMetadata()))
"""
TOWER_DEVICES = {f"{LOCAL}CPU:0", *(f"{LOCAL}GPU:{i}" for i in range(4))}
SEARCHED = "MatMul_3"  # the last tower's product, pinned by `with tf.device("/gpu:3")`


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def op_count(code: str, gpus: int) -> int:
    build(code, gpus)
    return len(pv.get_default_graph().get_operations())


def notebook(cells: list[str], kernel: bool = True) -> dict[str, Any]:
    """An nbformat 4 notebook of code cells; without ``kernel`` JupyterLab asks which to start."""
    metadata: dict[str, Any] = {}
    if kernel:
        metadata["language_info"] = {"name": "python"}
        metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": metadata,
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }


def without_kernel(notebook: dict[str, Any]) -> dict[str, Any]:
    """Drop what JupyterLab picks a kernel by (kernelspec, and language_info's language)."""
    notebook["metadata"].pop("kernelspec", None)
    notebook["metadata"].pop("language_info", None)
    return notebook


@contextlib.contextmanager
def reopened(browser: Any, lab: Any, saved: dict[str, Any], name: str) -> Iterator[tuple[Any, Any]]:
    """A saved notebook written again as ``name`` without its kernel and opened in a fresh page:
    the page and its inspector."""
    copy = lab.root / name
    copy.write_text(json.dumps(without_kernel(saved)))
    page = browser.new_page()
    try:
        open_lab(page, lab)
        open_notebook(page, copy.name, kernel=False)
        yield page, page.locator(".jp-NotebookPanel:visible .placeviz-inspector")
    finally:
        page.close()


def open_lab(page: Any, lab: Any) -> None:
    """JupyterLab in a workspace of its own, so it restores no document another page opened."""
    page.goto(lab.page_url(f"lab/workspaces/{uuid.uuid4().hex}"))
    page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")


def open_notebook(page: Any, path: str, kernel: bool) -> Any:
    """Open ``path`` in JupyterLab's notebook panel; with no kernel, answer "No Kernel"."""
    page.evaluate(
        """async (path) => {
            const panel = await window.jupyterapp.commands.execute(
                'docmanager:open', {path, factory: 'Notebook'});
            await panel.context.ready;
        }""",
        path,
    )
    if not kernel:
        page.locator(".jp-Dialog button", has_text="No Kernel").click()
        expect()(page.locator(".jp-Dialog")).to_have_count(0)
    panel = page.locator(".jp-NotebookPanel:visible >> nth=0")
    expect()(panel).to_be_visible()
    return panel


def kernel_name(page: Any) -> str:
    return str(
        page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.kernelDisplayName"
        )
    )


def legend_devices(root: Any) -> list[str]:
    """The legend's devices, in the order shown."""
    entries = root.locator(".placeviz-legend-entry").all()
    return [str(entry.get_attribute("data-device")) for entry in entries]


def check_towers(root: Any, expected_ops: int) -> None:
    """The DOM contract for the tower example, then search, centre, click and read the reason."""
    check = expect()
    check(root).to_have_attribute("data-ops", str(expected_ops))
    check(root).to_have_attribute("data-devices", str(len(TOWER_DEVICES)))
    check(root).to_have_attribute("data-first-paint-ms", _number())
    legend = root.locator(".placeviz-legend-entry")
    check(legend).to_have_count(len(TOWER_DEVICES))
    assert {e.get_attribute("data-device") for e in legend.all()} == TOWER_DEVICES
    assert int(root.get_attribute("data-runs")) >= 1
    assert int(root.get_attribute("data-events")) > 0
    memory = root.locator(".placeviz-memory")
    check(memory).to_have_count(1)
    check(memory).to_have_attribute("data-series", at_least(4))  # a series per GPU at least
    timing = root.locator(".placeviz-timing")
    check(timing).to_have_count(1)
    check(timing).to_have_attribute("data-bars", at_least(1))
    select_by_search(root, SEARCHED)
    check(root.locator(".placeviz-details-name")).to_have_text(SEARCHED)
    reason = root.locator(".placeviz-details .placeviz-reason")
    check(reason).to_contain_text("pinned")
    check(reason).to_contain_text("/gpu:3")


def _number() -> re.Pattern[str]:
    return re.compile(r"^\d+(\.\d+)?$")


def at_least(n: int) -> re.Pattern[str]:
    """An attribute value that is a whole number >= n (as a pattern, so Playwright waits for it)."""
    assert 0 <= n <= 9
    return re.compile(rf"^([{n}-9]|[1-9]\d+)$")


def select_by_search(root: Any, name: str) -> None:
    """Type ``name`` in the search box, Enter (centres it), then click the canvas's centre."""
    search = root.locator("input.placeviz-search")
    search.fill(name)
    search.press("Enter")
    canvas = root.locator("canvas.placeviz-dag")
    details = root.locator(".placeviz-details-name")
    for _ in range(10):  # the view may still be moving to the match: click again until it lands
        box = canvas.bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0, "DAG canvas not shown"
        canvas.click(position={"x": box["width"] / 2, "y": box["height"] / 2})
        if details.count() and details.first.text_content() == name:
            return
        root.page.wait_for_timeout(300)


@dataclass
class LiveRun:
    """The tower notebook after "Run All" in JupyterLab."""

    page: Any
    path: Path
    expected_ops: int
    legend: list[str]


@pytest.fixture(scope="module")
def live_towers(lab: Any, browser: Any) -> Iterator[LiveRun]:
    expected_ops = op_count(TOWERS, gpus=4)
    page = browser.new_page()
    try:
        path = start_cell(page, lab, "towers.ipynb", f"%%placement --gpus 4\n{TOWERS}")
        assert finish_run_all(page), "Run All reported a failed cell"
        root = page.locator(".jp-NotebookPanel .placeviz-inspector")
        expect()(root).to_have_count(1, timeout=60_000)
        expect()(root).to_have_attribute("data-ops", str(expected_ops), timeout=60_000)
        yield LiveRun(page, path, expected_ops, legend_devices(root))
    finally:
        if not page.is_closed():
            page.close()


def test_live_inspector_in_jupyterlab(live_towers: LiveRun) -> None:
    page = live_towers.page
    root = page.locator(".jp-NotebookPanel .placeviz-inspector")
    check_towers(root, live_towers.expected_ops)
    # The cell's printed result is still there, under the inspector or above it.
    expect()(page.locator(".jp-OutputArea-output", has_text="88.")).to_have_count(1)


def test_saved_notebook_shows_the_inspector_without_a_kernel(
    live_towers: LiveRun, lab: Any, browser: Any
) -> None:
    live = live_towers.page
    live.evaluate(
        """async (path) => {
            for (const widget of window.jupyterapp.shell.widgets('main')) {
                if (widget.context && widget.context.path === path) {
                    await widget.context.save();
                }
            }
        }""",
        live_towers.path.name,
    )
    saved = json.loads(live_towers.path.read_text())
    outputs = [o for cell in saved["cells"] for o in cell.get("outputs", [])]
    assert any(MIME in o.get("data", {}) for o in outputs), (
        f"the saved notebook has no {MIME} output; output types: "
        f"{[sorted(o.get('data', {})) for o in outputs]}"
    )
    live.close()
    lab.shut_down_kernels()
    # A copy that names no kernel: JupyterLab asks which to start, the test answers "No Kernel".
    copy = lab.root / "towers-saved.ipynb"
    copy.write_text(json.dumps(without_kernel(saved)))
    page = browser.new_page()
    try:
        open_lab(page, lab)
        open_notebook(page, copy.name, kernel=False)
        assert kernel_name(page) == "No Kernel"
        assert lab.api("GET", "/api/kernels") == []
        root = page.locator(".jp-NotebookPanel:visible .placeviz-inspector")
        expect()(root).to_have_count(1)
        check_towers(root, live_towers.expected_ops)
        assert legend_devices(root) == live_towers.legend
        assert lab.api("GET", "/api/kernels") == []  # nothing started one on the way
    finally:
        page.close()


def test_saved_output_renders_in_notebook_7(lab: Any, browser: Any) -> None:
    """Notebook 7 (served by the same Jupyter server) loads the same extension: a saved
    inspector output renders there with its legend and op count."""
    namespace = build(TOWERS, gpus=4)
    document = namespace["sess"].trace(runs=None).to_document()
    saved = notebook([TOWERS])
    saved["cells"][0]["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {MIME: document}}
    ]
    path = lab.root / "notebook7.ipynb"
    path.write_text(json.dumps(saved))
    page = browser.new_page()
    try:
        page.goto(lab.page_url(f"notebooks/{path.name}"))
        root = page.locator(".placeviz-inspector")
        expect()(root).to_have_count(1, timeout=60_000)
        expect()(root).to_have_attribute("data-ops", str(len(document["nodes"])))
        expect()(root.locator(".placeviz-legend-entry")).to_have_count(len(TOWER_DEVICES))
        assert set(legend_devices(root)) == TOWER_DEVICES
    finally:
        page.close()
    lab.shut_down_kernels()


TEACHING = {
    "01_where_ops_run.ipynb": "tutorial",
    "02_gpu_memory.ipynb": "gpu-memory",
    "03_parallel_execution.ipynb": "parallel-execution",
    "04_data_parallelism.ipynb": "data-parallelism",
    "05_training_where_things_live.ipynb": "where-things-live",
    "06_automatic_placement.ipynb": "automatic-placement",
    "07_parameter_servers.ipynb": "parameter-servers",
    "08_real_models.ipynb": "real-models",
    "09_model_parallel_rnn.ipynb": "model-parallel-rnn",
    "10_will_it_fit.ipynb": "will-it-fit",
}


def inspectors_shown(code_cells: list[dict[str, Any]]) -> int:
    """The inspectors a notebook's cells draw: one per ``%%placement`` cell with a widget, two
    per comparison (``--compare``, or a cell ending in ``compare(...)``)."""
    count = 0
    for cell in code_cells:
        source = "".join(cell["source"])
        first = source.split("\n", 1)[0]
        if first.startswith("%%placement") and "--no-widget" not in first:
            count += 2 if "--compare" in first else 1
        elif re.search(r"^\w+\.compare\(", source.rsplit("\n", 1)[-1]):
            count += 2
    return count


# Page widths every teaching notebook's plots are read at: a wide page, and a narrow one.
NARROW_PAGES_PX = (1300, 600)


@pytest.mark.parametrize("name", sorted(TEACHING))
def test_the_teaching_notebook_runs_all_in_jupyterlab(
    lab: Any, browser: Any, keep_screenshot: Any, name: str
) -> None:
    """A student's "Run All" goes past the cell that fails on purpose (Run All stops at any
    failed cell, tagged raises-exception or not); every ``%%placement`` cell shows an inspector,
    a cluster's with its devices grouped by task, each named with its process."""
    if "parameter_servers" in name:
        pytest.importorskip("distributed")
    source = ROOT / "notebooks" / name
    teaching = json.loads(source.read_text("utf-8"))
    code = [c for c in teaching["cells"] if c["cell_type"] == "code"]
    inspectors = inspectors_shown(code)
    shutil.copy(source, lab.root / source.name)
    page = browser.new_page()
    try:
        open_lab(page, lab)
        open_notebook(page, source.name, kernel=True)
        start_run_all(page)
        assert finish_run_all(page), "Run All stopped at a failed cell"
        counts = page.evaluate(
            """() => [...window.jupyterapp.shell.currentWidget.content.model.cells]
                .filter((c) => c.type === 'code').map((c) => c.executionCount)"""
        )
        assert len(counts) == len(code) and all(counts), f"cells left unrun: {counts}"
        roots = page.locator(".jp-NotebookPanel:visible .placeviz-inspector")
        expect()(roots).to_have_count(inspectors, timeout=60_000)
        if name.startswith("01"):
            assert (lab.root / "towers.html").is_file()  # the --html cell wrote its page
        elif "parameter_servers" in name:
            hosts = roots.first.locator(".placeviz-legend-host-name")
            expect()(hosts).to_have_count(4)  # 2 ps and 2 worker tasks
            expect()(hosts.first).to_contain_text(
                re.compile(r"/job:ps/replica:0/task:0 · process \d+ at 127\.0\.0\.1:\d+")
            )
        cells = page.locator(".jp-NotebookPanel:visible .jp-CodeCell").filter(
            has=page.locator(".placeviz-inspector")
        )
        # A resized page (its outputs come out narrower): every plot keeps its own height (plotly
        # sized plots first drawn out of view to their element, which then collapsed under the
        # text that follows) ...
        page.set_viewport_size({"width": 1300, "height": 2400})  # a whole output in view
        page.wait_for_timeout(1000)
        heights = page.evaluate(
            """() => [...document.querySelectorAll('.jp-NotebookPanel .placeviz-plot')]
                .filter((p) => p.querySelector('.main-svg'))
                .map((p) => [p.getBoundingClientRect().height,
                             Number(p.querySelector('.main-svg').getAttribute('height'))])"""
        )
        assert heights and all(abs(box - svg) < 1 for box, svg in heights), heights
        # Every plot's x ticks read apart (3 or more), and no label or title is cut, on a wide
        # page and on a 600 px one (where JupyterLab leaves an output about 500 px).
        problems = []
        for width in NARROW_PAGES_PX:
            page.set_viewport_size({"width": width, "height": 2400})
            page.wait_for_timeout(1000)
            plots = read_plots_in_view(roots)
            assert plots, f"no plots at {width} px"
            problems += [f"{width} px page: {p}" for p in plot_problems(plots, least_ticks=3)]
        assert not problems, "\n".join(problems)
        page.set_viewport_size({"width": 1300, "height": 2400})
        page.wait_for_timeout(1000)
        read_plots_in_view(roots)  # back at 1,300 px, settled, for the boxes and screenshots
        # ... and every graph, refitted to its new width, still names every box it shows.
        named = page.evaluate(
            """() => [...document.querySelectorAll('.jp-NotebookPanel .placeviz-dag-view')]
                .map((v) => [v.dataset.labelsDrawn, v.dataset.visibleNodes, v.dataset.unnamed])"""
        )
        assert named, named
        assert all(drawn == shown for drawn, shown, _ in named), named
        for i in range(cells.count()):
            output = cells.nth(i).locator(".jp-Cell-outputWrapper")
            keep_screenshot(output, f"{TEACHING[name]}-{i + 1}")
    finally:
        page.close()
    lab.shut_down_kernels()


def start_run_all(page: Any) -> None:
    """Start Run All in the open notebook without waiting for it, to watch the page meanwhile."""
    page.evaluate(
        """async () => {
            const panel = window.jupyterapp.shell.currentWidget;
            await panel.sessionContext.ready;
            window.__runAll = window.jupyterapp.commands.execute('notebook:run-all-cells');
        }"""
    )


def finish_run_all(page: Any) -> bool:
    """Wait for the Run All that ``start_run_all`` began; whether it succeeded."""
    return bool(page.evaluate("async () => await window.__runAll"))


def start_cell(page: Any, lab: Any, name: str, cell: str) -> Path:
    """Write ``name``, a notebook loading placeviz then running ``cell``; open it in JupyterLab
    with a kernel and start Run All (``finish_run_all`` waits for it)."""
    path = lab.root / name
    path.write_text(json.dumps(notebook(["%load_ext placeviz", cell])))
    open_lab(page, lab)
    open_notebook(page, path.name, kernel=True)
    start_run_all(page)
    return path


def wait_for_saved_copy(page: Any) -> None:
    """Wait, mid-cell, until the saved copy of the widget's document is on the page."""
    page.wait_for_function(
        """() => document.querySelector('.jp-NotebookPanel .placeviz-mime') !== null""",
        timeout=60_000,
    )


STREAMED_RUNS = 30
STREAMING = TOWERS.replace(
    "print(sess.run(total, options=full, run_metadata=tf.RunMetadata()))",
    f"""import time

for _ in range({STREAMED_RUNS}):
    sess.run(total, options=full, run_metadata=tf.RunMetadata())
    time.sleep(0.1)""",
)


def test_the_widget_streams_while_the_cell_runs(lab: Any, browser: Any) -> None:
    """Mid-cell the live widget already shows some runs; at the end the saved output has all."""
    assert "time.sleep" in STREAMING
    page = browser.new_page()
    try:
        start_cell(page, lab, "streaming.ipynb", f"%%placement --gpus 4\n{STREAMING}")
        # The first run count the page shows: mid-cell (from the widget) it is below the total.
        first = page.wait_for_function(
            """() => {
                const root = document.querySelector('.jp-NotebookPanel .placeviz-inspector');
                const runs = root ? Number(root.dataset.runs) : 0;
                return runs >= 1 ? runs : null;
            }""",
            timeout=60_000,
        ).json_value()
        assert first < STREAMED_RUNS, (
            f"the live widget showed no run while the cell ran {STREAMED_RUNS} of them "
            f"(the first count shown was {first}, from the final output)"
        )
        assert finish_run_all(page), "Run All failed"
        root = page.locator(".jp-NotebookPanel .placeviz-inspector")
        expect()(root).to_have_count(1)
        expect()(root).to_have_attribute("data-runs", str(STREAMED_RUNS), timeout=30_000)
    finally:
        page.close()
    lab.shut_down_kernels()


LONG_RUN = """\
%%placement
import placeviz as tf

x = tf.random_uniform([1200, 1200], seed=1)
for _ in range(12):
    x = tf.matmul(x, x) * 1e-3  # about 0.1 s each on a CPU core: one run of over a second
tf.Session().run(x)
"""


def test_ops_change_state_while_a_long_run_goes_on(lab: Any, browser: Any) -> None:
    """During one long run the DAG shows an op running (data-running), then none once it ended."""
    page = browser.new_page()
    try:
        start_cell(page, lab, "long_run.ipynb", LONG_RUN)
        running = page.wait_for_function(
            """() => {
                const root = document.querySelector('.jp-NotebookPanel .placeviz-inspector');
                return root && root.dataset.running === '1' ? root.dataset.liveRun : null;
            }""",
            timeout=60_000,
        ).json_value()
        assert running == "0"  # the cell's first and only run, while it runs
        assert finish_run_all(page), "Run All failed"
        root = page.locator(".jp-NotebookPanel .placeviz-inspector")
        expect()(root).to_have_attribute("data-runs", "1", timeout=30_000)
        expect()(root).to_have_attribute("data-running", "0")
    finally:
        page.close()
    lab.shut_down_kernels()


CHAIN = """\
import placeviz as tf

x = tf.constant(1.0, name="x")
for _ in range({steps}):
    x = x * 2.0
"""


@pytest.mark.usefixtures("kernel_env")
def test_twenty_inspectors_in_one_notebook(lab: Any, browser: Any, tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    sources = [CHAIN.format(steps=k) for k in range(20)]
    expected = [op_count(source, gpus=2) for source in sources]
    assert len(set(expected)) == 20  # every inspector has its own op count
    cells = ["%load_ext placeviz", *(f"%%placement --gpus 2\n{s}" for s in sources)]
    executed = nbformat.from_dict(notebook(cells))
    nbclient.NotebookClient(
        executed,
        kernel_name="python3",
        timeout=120,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    path = lab.root / "twenty.ipynb"
    nbformat.write(nbformat.from_dict(without_kernel(executed)), path)
    page = browser.new_page()
    try:
        open_lab(page, lab)
        open_notebook(page, path.name, kernel=False)
        roots = page.locator(".jp-NotebookPanel:visible .placeviz-inspector")
        expect()(roots).to_have_count(20)
        for i, root in enumerate(roots.all()):
            root.scroll_into_view_if_needed()
            expect()(root).to_have_attribute("data-ops", str(expected[i]))
            expect()(root).to_have_attribute("data-first-paint-ms", _number())
            assert int(root.get_attribute("data-drawn")) > 0
    finally:
        page.close()


def test_a_wheel_installed_without_node_draws_the_inspector_in_jupyterlab(
    wheel_lab: Any, browser: Any
) -> None:
    """The wheel's own extension, in a venv without Node: JupyterLab loads it and a
    ``%%placement`` cell, run by the venv's kernel (placeviz from the wheel), draws the
    inspector."""
    page = browser.new_page()
    try:
        cell = f"%%placement --gpus 4\n{TOWERS}\nprint(tf.__file__)"
        start_cell(page, wheel_lab, "wheel.ipynb", cell)
        assert finish_run_all(page), "Run All failed"
        root = page.locator(".jp-NotebookPanel:visible .placeviz-inspector")
        expect()(root).to_have_count(1, timeout=60_000)
        expect()(root).to_have_attribute("data-first-paint-ms", _number())
        assert root.locator(".placeviz-legend-entry").count() == 5  # CPU and 4 GPUs
        printed = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").all_inner_texts()
        assert any("venv/lib/" in text and "placeviz/__init__.py" in text for text in printed)
    finally:
        page.close()
    wheel_lab.shut_down_kernels()


# -- the standalone page ----------------------------------------------------------------------
def write_page(trace: pv.Trace, path: Path) -> Path:
    trace.to_html(path)
    return path


@pytest.fixture
def offline_page(page: Any, standalone_bundle: None) -> Iterator[Any]:
    """A tab that records every request leaving the file it shows (the page must make none)."""
    requests: list[str] = []
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(("file:", "data:", "blob:"))
            else requests.append(request.url)
        ),
    )
    page.requests = requests
    yield page


@pytest.mark.usefixtures("kernel_env")
def test_an_nbconvert_export_shows_every_inspector_without_a_server(
    offline_page: Any, tmp_path: Path
) -> None:
    """A teaching notebook run by nbclient and exported with ``jupyter nbconvert --to html``:
    opened from a file (no Jupyter, placeviz's renderer absent), each ``%%placement`` cell's
    output draws its inspector from its ``text/html``, the bundle embedded once."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nbconvert = pytest.importorskip("nbconvert")
    notebook = nbformat.read(ROOT / "notebooks" / "04_data_parallelism.ipynb", as_version=4)
    nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=180,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    with_documents = [
        cell
        for cell in notebook.cells
        if any(
            "application/vnd.placeviz+json" in o.get("data", {}) for o in cell.get("outputs", [])
        )
    ]
    body, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    assert body.count(html_bundle()[-200:]) == 1  # the bundle, once
    path = tmp_path / "exported.html"
    path.write_text(body, "utf-8")
    offline_page.goto(path.as_uri())
    roots = offline_page.locator(".placeviz-inspector")
    expect()(roots).to_have_count(len(with_documents), timeout=30_000)
    expect()(offline_page.locator(".placeviz-waiting")).to_have_count(0)
    for root in roots.all():
        root.scroll_into_view_if_needed()
        expect()(root).to_have_attribute("data-first-paint-ms", _number())
        assert root.locator(".placeviz-legend-entry").count() >= 3
        assert int(root.locator(".placeviz-dag-view").get_attribute("data-visible-nodes")) > 0


def test_standalone_html(offline_page: Any, tmp_path: Path) -> None:
    sess = build(TOWERS, gpus=4)["sess"]
    expected_ops = len(pv.get_default_graph().get_operations())
    path = write_page(sess.trace(), tmp_path / "towers.html")
    offline_page.goto(path.as_uri())
    root = offline_page.locator(".placeviz-inspector")
    expect()(root).to_have_count(1)
    check_towers(root, expected_ops)
    assert offline_page.requests == []
    assert offline_page.problems == []


# Markup in the text a user controls: a device function's name (it goes into the placement
# reason) and the file name code was compiled from (it goes into each op's source line).
PAYLOAD = '</script><img src=x onerror="window.__pwned = 1">'
FILE_PAYLOAD = "<img src=y onerror=window.__pwned=2>"


def test_standalone_html_shows_user_markup_as_text(offline_page: Any, tmp_path: Path) -> None:
    def on_gpu_1(op: Any) -> str:
        return "/gpu:1"

    on_gpu_1.__name__ = on_gpu_1.__qualname__ = PAYLOAD
    code = "import placeviz as tf\nsess = tf.Session()\nx = tf.constant(2.0, name='x')\n"
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    pv.reset_default_graph()
    namespace: dict[str, Any] = {}
    exec(compile(code, FILE_PAYLOAD, "exec"), namespace)
    with pv.device(on_gpu_1):
        # a tensor operand: a Python number would add a Const 'untrusted/y' the search finds too
        untrusted = pv.multiply(namespace["x"], namespace["x"], name="untrusted")
    sess = namespace["sess"]
    assert sess.run(untrusted) == 4.0
    assert PAYLOAD in sess.placement.explain("untrusted").text  # the markup is in the document
    path = write_page(sess.trace(), tmp_path / "untrusted.html")
    page = offline_page
    page.goto(path.as_uri())
    root = page.locator(".placeviz-inspector")
    expect()(root).to_have_count(1)
    expect()(root).to_have_attribute("data-first-paint-ms", _number())
    select_by_search(root, "untrusted")
    expect()(root.locator(".placeviz-details-name")).to_have_text("untrusted")
    expect()(root.locator(".placeviz-reason")).to_contain_text(PAYLOAD)
    select_by_search(root, "x")
    expect()(root.locator(".placeviz-details-source")).to_contain_text(FILE_PAYLOAD)
    page.wait_for_timeout(200)  # an injected image's error handler would have run by now
    assert page.locator("img").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert page.problems == []
    assert page.requests == []


# A kernel that fails at run time (shapes only the feed gives) and an op no device can take.
FAILURES = """\
import placeviz as tf

p = tf.placeholder(tf.float32, [None, None], name="p")
q = tf.placeholder(tf.float32, [None, None], name="q")
mismatched = tf.matmul(p, q, name="mismatched")
with tf.device("/gpu:7"):
    on_gpu7 = tf.negative(p, name="on_gpu7")
sess = tf.Session()
"""


def test_a_failed_op_and_an_unplaced_op_show_their_errors(
    offline_page: Any, tmp_path: Path
) -> None:
    """Each op's details give, as its reason, the error that stopped it: the failed run's for a
    kernel that raised, the placer's for an op that could not be placed."""
    names = build(FAILURES, gpus=2)
    sess = names["sess"]
    errors = {}
    row = [[1.0, 2.0]]
    for fetch, feed in (("mismatched", {"p": row, "q": row}), ("on_gpu7", {"p": row})):
        with pytest.raises(pv.errors.InvalidArgumentError) as raised:
            sess.run(names[fetch], {names[k]: v for k, v in feed.items()})
        errors[fetch] = str(raised.value)
    assert "'on_gpu7' (Neg, created at <cell>:7)" in errors["on_gpu7"]
    page = offline_page
    page.goto(write_page(sess.trace(runs=None), tmp_path / "failures.html").as_uri())
    root = page.locator(".placeviz-inspector")
    expect()(root).to_have_attribute("data-first-paint-ms", _number())
    error = root.locator(".placeviz-details .placeviz-reason-error")
    kind = root.locator(".placeviz-details .placeviz-reason-failed")
    select_by_search(root, "mismatched")
    expect()(kind).to_have_text("failed")
    # Compared whole (the error has a newline and a tab, which to_have_text would normalise).
    assert error.text_content() == f"run 1: {errors['mismatched']}"
    select_by_search(root, "on_gpu7")
    expect()(kind).to_have_text("placement failed")
    assert error.text_content() == errors["on_gpu7"]
    assert page.problems == []
    assert page.requests == []


def test_a_copied_page_renders_on_its_own(offline_page: Any, tmp_path: Path) -> None:
    """The file needs nothing beside it: moved elsewhere, it still renders."""
    sess = build(TOWERS, gpus=4)["sess"]
    path = write_page(sess.trace(), tmp_path / "towers.html")
    moved = tmp_path / "elsewhere" / "copy.html"
    moved.parent.mkdir()
    shutil.move(path, moved)
    offline_page.goto(moved.as_uri())
    expect()(offline_page.locator(".placeviz-inspector")).to_have_attribute(
        "data-devices", str(len(TOWER_DEVICES))
    )


PRINTING = """\
%%placement --gpus 2 --log
import time
import placeviz as tf

print("before the session")
x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
with tf.device("/gpu:1"):
    y = tf.matmul(x, x, name="y")
sess = tf.Session()
for _ in range(3):
    sess.run(y)
print("after the runs")
time.sleep(4)  # the saved copy of the document is renewed every 2 s
"""

# The cell's outputs, top to bottom: what each holds.
OUTPUTS = """() => {
    const cell = document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')[1];
    return [...cell.querySelectorAll('.jp-OutputArea-child')].map((child) => ({
        text: child.querySelector('.jp-OutputArea-output')?.textContent ?? '',
        widget: child.querySelector('.placeviz-widget .placeviz-inspector') !== null,
        inspectors: child.querySelectorAll('.placeviz-inspector').length,
        height: child.getBoundingClientRect().height,
    }));
}"""


def test_a_cell_prints_above_its_one_inspector(lab: Any, browser: Any) -> None:
    """What the cell prints (the placement log too) shows above the live widget, and the saved
    copy of the widget's document after it shows nothing while the widget is on the page."""
    page = browser.new_page()
    try:
        start_cell(page, lab, "printing.ipynb", PRINTING)
        # Mid-cell, once the saved copy was made (its renderer is on the page, empty).
        wait_for_saved_copy(page)
        live = page.evaluate(OUTPUTS)
        texts = [i for i, o in enumerate(live) if "after the runs" in o["text"]]
        widgets = [i for i, o in enumerate(live) if o["widget"]]
        assert len(texts) == 1 and len(widgets) == 1 and texts[0] < widgets[0], live
        assert "y: (MatMul): /job:localhost/replica:0/task:0/device:GPU:1" in live[texts[0]]["text"]
        assert sum(o["inspectors"] for o in live) == 1, live
        saved = [o for o in live[widgets[0] + 1 :] if not o["text"].strip()]
        assert saved and all(o["height"] < 1 for o in saved), live  # the copy takes no room
        assert finish_run_all(page), "Run All failed"
        page.wait_for_function(
            """() => document.querySelector('.jp-NotebookPanel .placeviz-widget') === null""",
            timeout=30_000,
        )
        done = page.evaluate(OUTPUTS)
        assert sum(o["inspectors"] for o in done) == 1, done
        shown = [i for i, o in enumerate(done) if o["inspectors"]]
        assert [i for i, o in enumerate(done) if "before the session" in o["text"]] < shown
        assert all(o["height"] < 1 for o in done[shown[0] + 1 :]), done  # the copy, emptied
    finally:
        page.close()
    lab.shut_down_kernels()


DIES = """\
%%placement --gpus 2
import os, signal, time
import placeviz as tf

x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
with tf.device("/gpu:1"):
    y = tf.matmul(x, x, name="y")
sess = tf.Session()
for _ in range(3):
    sess.run(y)
time.sleep(4)  # the saved copy of the document is renewed every 2 s
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_notebook_saved_after_its_kernel_died_shows_what_the_inspector_had(
    lab: Any, browser: Any
) -> None:
    """The kernel dies mid-cell; the notebook JupyterLab saves then, opened again without a
    kernel, shows the runs the live widget had been sent (from the saved copy after it)."""
    page = browser.new_page()
    try:
        path = start_cell(page, lab, "dies.ipynb", DIES)
        wait_for_saved_copy(page)
        assert not finish_run_all(page), "the cell finished, yet its kernel was to die"
        # The page keeps the dead kernel's widget (disconnected), its copy still hidden.
        root = page.locator(".jp-NotebookPanel .placeviz-inspector")
        expect()(root).to_have_count(1)
        expect()(root).to_have_attribute("data-runs", "3")
        page.evaluate(
            """async () => { await window.jupyterapp.shell.currentWidget.context.save(); }"""
        )
    finally:
        page.close()
    lab.shut_down_kernels()
    saved = json.loads(path.read_text())
    with reopened(browser, lab, saved, "dies-saved.ipynb") as (_, root):
        expect()(root).to_have_count(1)
        expect()(root).to_have_attribute("data-runs", "3")
        expect()(root).to_have_attribute("data-ops", "2")


# A graph on two GPUs, then a loop that streams a run every 0.1 s for a minute unless stopped;
# it writes its kernel's pid first, for the test to kill.
STOPPED_GRAPH = """\
import placeviz as tf

x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
with tf.device("/gpu:1"):
    y = tf.matmul(x, x, name="y")
z = tf.nn.relu(y, name="z")
"""
STREAMS_UNTIL_STOPPED = """
import os, time

with open("kernel.pid", "w") as pid:
    pid.write(str(os.getpid()))
sess = tf.Session()
for _ in range(600):
    sess.run(z)
    time.sleep(0.1)
"""


def stop_kernel(page: Any, lab: Any, how: str) -> None:
    """Restart the notebook's kernel as JupyterLab's Restart Kernel does, or kill its process
    (the server then restarts it)."""
    if how == "restart":
        page.evaluate(
            """async () => {
                await window.jupyterapp.shell.currentWidget.sessionContext.restartKernel();
            }"""
        )
    else:
        os.kill(int((lab.root / "kernel.pid").read_text()), signal.SIGKILL)


@pytest.mark.parametrize("how", ["restart", "kill"])
def test_a_kernel_stopped_in_the_first_seconds_leaves_the_inspector_in_the_notebook(
    lab: Any, browser: Any, how: str
) -> None:
    """The kernel stops as soon as the live widget shows a run, before the kernel's first saved
    copy (2 s in): JupyterLab writes the document the widget shows into the cell, so the saved
    notebook holds it in place of the bare widget view (`PlacementInspector()` without a kernel)
    and, opened again, draws the inspector."""
    cell = f"%%placement --gpus 2\n{STOPPED_GRAPH}{STREAMS_UNTIL_STOPPED}"
    build(STOPPED_GRAPH, gpus=2)
    expected = sorted(op.name for op in pv.get_default_graph().get_operations())
    check = expect()
    page = browser.new_page()
    try:
        path = start_cell(page, lab, f"stopped-{how}.ipynb", cell)
        # The runs the live widget shows, and whether the kernel's saved copy is there yet.
        shown, copied = page.wait_for_function(
            """() => {
                const panel = document.querySelector('.jp-NotebookPanel');
                const root = panel?.querySelector('.placeviz-widget .placeviz-inspector');
                const runs = root ? Number(root.dataset.runs) : 0;
                return runs >= 1 ? [runs, panel.querySelector('.placeviz-mime') !== null] : null;
            }""",
            timeout=60_000,
        ).json_value()
        stop_kernel(page, lab, how)
        assert not copied, "the kernel had saved a copy already: the test stopped it too late"
        assert not finish_run_all(page), "the cell finished, yet its kernel was stopped"
        # The live view gives way to the document it showed, drawn by the MIME renderer.
        check(page.locator(".jp-NotebookPanel .placeviz-widget")).to_have_count(0)
        root = page.locator(".jp-NotebookPanel .placeviz-mime .placeviz-inspector")
        check(root).to_have_count(1)
        check(root).to_have_attribute("data-runs", at_least(shown))
        page.evaluate(
            "async () => { await window.jupyterapp.commands.execute('docmanager:save'); }"
        )
    finally:
        page.close()
    lab.shut_down_kernels()
    saved = json.loads(path.read_text())
    outputs = saved["cells"][1]["outputs"]
    kinds = [sorted(o.get("data", {})) for o in outputs]
    assert not any("application/vnd.jupyter.widget-view+json" in k for k in kinds), kinds
    documents = [o["data"][MIME] for o in outputs if o.get("data", {}).get(MIME)]
    assert len(documents) == 1, kinds  # the rescued document; the kernel's copy, if any, emptied
    document = documents[0]
    assert sorted(node["name"] for node in document["nodes"]) == expected
    assert len(document["runs"]) >= shown
    names = {node["id"]: node["name"] for node in document["nodes"]}
    events = document["events"]
    ran = {names[n] for k, n in zip(events["kind"], events["node"]) if k == EventKind.OP}
    assert ran == set(expected)
    with reopened(browser, lab, saved, f"stopped-{how}-saved.ipynb") as (page, root):
        check(root).to_have_count(1)
        check(root).to_have_attribute("data-ops", str(len(expected)))
        check(root).to_have_attribute("data-runs", str(len(document["runs"])))
        check(root.locator("canvas.placeviz-dag")).to_have_count(1)
        check(page.locator(".jp-NotebookPanel:visible >> nth=0")).not_to_contain_text(
            "PlacementInspector()"
        )


LOOP = towers_loop()


def test_the_timeline_shows_a_picked_run_with_op_names(offline_page: Any, tmp_path: Path) -> None:
    """The scrubber spans the picked run's activity (not the cell, not the run's record) and the
    timeline names its bars; every run's span is what the document's events say."""
    sess = build(LOOP, gpus=2)["sess"]
    trace = sess.trace(runs=None)
    document = trace.to_document()
    path = write_page(trace, tmp_path / "loop.html")
    page = offline_page
    page.goto(path.as_uri())
    root = page.locator(".placeviz-inspector")
    expect()(root).to_have_attribute("data-runs", "4")
    timing = root.locator(".placeviz-timing")
    scrubber = root.locator(".placeviz-scrubber")
    for run in (2, 0):
        root.locator("select.placeviz-run").select_option(str(run))
        lo, hi = run_spans(document)[run]
        expect()(scrubber).to_have_attribute("data-range-start", _number())
        assert float(scrubber.get_attribute("data-range-start")) == pytest.approx(lo)
        assert float(scrubber.get_attribute("data-range-end")) == pytest.approx(hi)
        slider = root.locator("input.placeviz-time")
        assert float(slider.get_attribute("max")) - float(slider.get_attribute("min")) == (
            pytest.approx(hi - lo)
        )
        # Zoomed to one run, the two towers' MatMul, Relu and loss bars carry their names.
        expect()(timing).not_to_have_attribute("data-labelled-bars", "0")
        labels = timing.locator(".textpoint text").evaluate_all(
            "els => els.map(e => e.textContent)"
        )
        assert {"MatMul", "Relu"} <= {label.split("/")[-1] for label in labels}, labels
    assert page.problems == []
    assert page.requests == []


COMPARE = """\
%%placement --gpus 2 --compare simple,cost
import numpy as np
import placeviz as tf
from placeviz.examples.transformer import build_transformer_block

x, out = build_transformer_block(tokens=1024, width=512, heads=8)
sess = tf.Session()
sess.run(out, {x: np.ones((1024, 512), np.float32)})
"""


def test_compare_shows_two_placements_side_by_side(
    lab: Any, browser: Any, keep_screenshot: Any
) -> None:
    """``--compare simple,cost``: one view, the two inspectors side by side with the ops that
    moved marked in both graphs, a step-time summary, and the two timelines on one window."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1600, "height": 1400})
    check = expect()
    try:
        start_cell(page, lab, "compare.ipynb", COMPARE)
        assert finish_run_all(page), "Run All reported a failed cell"
        view = page.locator(".jp-NotebookPanel .placeviz-compare")
        check(view).to_have_count(1, timeout=60_000)
        moved = int(view.get_attribute("data-moved"))
        assert moved > 0
        simple_ns, cost_ns = map(int, view.get_attribute("data-step-ns").split(","))
        assert cost_ns < simple_ns  # the cost placer's step is the shorter
        check(view.locator(".placeviz-compare-step")).to_contain_text("simple")
        check(view.locator(".placeviz-compare-moved-op").first).to_contain_text("→")
        inspectors = view.locator(".placeviz-inspector")
        check(inspectors).to_have_count(2)
        for side in range(2):
            dag = view.locator(f".placeviz-compare-column[data-side='{side}'] .placeviz-dag-view")
            check(dag).to_have_attribute("data-marked-nodes", at_least(1), timeout=30_000)
        windows = view.locator(".placeviz-timing")
        check(windows).to_have_count(2)
        check(windows.nth(0)).to_have_attribute("data-window", re.compile(r"^-?\d+,\d+$"))
        # Each window is in its own trace's clock, from its last run's first op: one length,
        # the longer step's, so the two time axes line up.
        spans = [
            [int(v) for v in windows.nth(i).get_attribute("data-window").split(",")]
            for i in range(2)
        ]
        lengths = [end - start for start, end in spans]
        assert lengths[0] == lengths[1] >= max(simple_ns, cost_ns), spans
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 1600, "the comparison overflows the page sideways"
        keep_screenshot(view, "compare-simple-cost")
    finally:
        page.close()
    lab.shut_down_kernels()
