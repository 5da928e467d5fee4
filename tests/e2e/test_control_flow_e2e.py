"""Control flow in a real browser (standalone pages written by ``Trace.to_html``, chromium): a
2-layer LSTM under ``dynamic_rnn`` draws its while loop marked as a loop with the run's iteration
count, and an op of its body lists its executions per iteration on its layer's GPU; a cond's
branch not taken is drawn faint, keyed and explained as not executed, and the other branch
once the other run is picked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from placeviz.examples.documents import cond_branches, lstm_dynamic

pytestmark = pytest.mark.e2e

STEPS = 12
LOOP_COLOUR = (0, 121, 107)  # the DAG theme's loop colour (dag.ts: --placeviz-dag-loop)


def _open(page: Any, trace: Any, path: Path) -> Any:
    trace.to_html(path)
    page.goto(path.as_uri())
    root = page.locator(".placeviz-inspector")
    page.wait_for_selector(
        '.placeviz-inspector[data-first-paint-ms]:not([data-first-paint-ms=""])', state="attached"
    )
    page.wait_for_timeout(300)
    return root


def _select(page: Any, dag: Any, name: str) -> None:
    """Find the op (the DAG centres it, opening the scopes hiding it) and click it."""
    search = dag.locator(".placeviz-search")
    search.fill(name)
    search.press("Enter")
    page.wait_for_timeout(300)
    box = dag.locator("canvas").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_timeout(300)


def _pixels_of(dag: Any, colour: tuple[int, int, int]) -> int:
    return dag.locator("canvas").evaluate(
        """(canvas, [r, g, b]) => {
            const data = canvas.getContext('2d')
                .getImageData(0, 0, canvas.width, canvas.height).data;
            let n = 0;
            for (let i = 0; i < data.length; i += 4) {
                if (data[i] === r && data[i + 1] === g && data[i + 2] === b) n++;
            }
            return n;
        }""",
        list(colour),
    )


def test_a_dynamic_rnn_loop_shows_its_iterations_and_each_ops_executions(
    page: Any, standalone_bundle: None, tmp_path: Path
) -> None:
    root = _open(page, lstm_dynamic(STEPS), tmp_path / "lstm.html")
    dag = root.locator(".placeviz-dag-view")
    assert dag.get_attribute("data-loops") == f"rnn/while={STEPS}"
    assert "loop" in dag.get_attribute("data-marks").split()
    assert "while loop (its iterations in the run shown)" in dag.inner_text()
    assert int(dag.get_attribute("data-boxes")) <= 60
    assert dag.get_attribute("data-label-overlaps") == "0"
    # The loop is drawn: its tab (folded) or its container's outline, in the loop's colour.
    assert _pixels_of(dag, LOOP_COLOUR) > 50
    _select(page, dag, "rnn/while/rnn/multi_rnn_cell/cell_1/lstm_cell/MatMul")
    assert dag.get_attribute("data-loops-opened") == "1"
    details = root.locator(".placeviz-details")
    assert (
        details.locator(".placeviz-details-name").inner_text().endswith("cell_1/lstm_cell/MatMul")
    )
    rows = details.locator(".placeviz-details-iterations li")
    assert rows.count() == STEPS + 1
    assert rows.nth(0).inner_text().startswith("iteration 1 · ")
    assert rows.nth(0).inner_text().endswith(" · GPU:1")  # the second layer's GPU
    assert "not executed" in rows.nth(STEPS).inner_text()
    assert f"iterations ({STEPS} run)" in details.inner_text()


def test_the_branch_not_taken_is_drawn_faint_and_said_not_executed(
    page: Any, standalone_bundle: None, tmp_path: Path
) -> None:
    root = _open(page, cond_branches(), tmp_path / "cond.html")
    dag = root.locator(".placeviz-dag-view")
    # The last run took the false branch: the true branch's ops were not executed.
    assert int(dag.get_attribute("data-not-run-boxes")) >= 2
    assert "not-run" in dag.get_attribute("data-marks").split()
    assert "not executed in the run shown" in dag.locator(".placeviz-key-not-run").inner_text()
    _select(page, dag, "pick/first")
    details = root.locator(".placeviz-details")
    assert details.locator(".placeviz-details-name").inner_text() == "pick/first"
    assert "not executed in run 2" in details.inner_text()
    # The first run took the true branch: pick/first ran in it.
    root.locator("select.placeviz-run").select_option("0")
    page.wait_for_timeout(400)
    assert "not executed" not in details.inner_text()
    assert int(dag.get_attribute("data-not-run-boxes")) >= 2  # now the false branch's


def test_the_timelines_hover_names_an_executions_iteration(
    page: Any, standalone_bundle: None, tmp_path: Path
) -> None:
    root = _open(page, lstm_dynamic(STEPS), tmp_path / "lstm.html")
    timing = root.locator(".placeviz-timing")
    page.wait_for_selector(".placeviz-timing .main-svg", timeout=30_000)
    timing.locator(".main-svg").first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    lane = timing.locator(".ytick text", has_text="GPU:1").first.bounding_box()
    plot = timing.locator(".main-svg .nsewdrag").first.bounding_box()
    tooltip = timing.locator(".placeviz-tooltip")
    y = lane["y"] + lane["height"] / 2
    seen = set()
    for x in range(int(plot["x"]) + 2, int(plot["x"] + plot["width"]) - 2, 4):
        page.mouse.move(x, y)
        if tooltip.is_visible() and "rnn/while/" in tooltip.inner_text():
            seen.add(tooltip.inner_text())
    bars = [text for text in seen if " ops · " not in text]
    blocks = [text for text in seen if " ops · " in text]
    assert bars and blocks, seen
    # "rnn/while/rnn/multi_rnn_cell/cell_1/lstm_cell/MatMul (MatMul) · 3 µs · GPU:1
    # · run 2 · iteration 4 · clock"; a block: "19 ops · 66 µs · GPU:1 · run 2
    # · iteration 3: ..." (or "iterations 3–4")
    assert all(re.search(r" · GPU:1 .* · iteration \d+ · ", text) for text in bars), bars
    assert all(re.search(r" · iterations? \d+(–\d+)?: ", text) for text in blocks), blocks
