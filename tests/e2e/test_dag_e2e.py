"""The DAG at first paint in a real browser: folded, fitted, every box named, labels apart, pixels.

Three graphs built here with placeviz, shown on the standalone page: a 2-layer MLP trained with
Adam on 2 simulated GPUs, a training step of a 4-layer MLP (init and 3 steps), and a 3,001-op
graph of 100 name scopes. Every check reads the DAG element's data attributes
(docs/inspector.md) or the canvas pixels; the op counts come from the graphs. Set
PLACEVIZ_SCREENSHOTS to a folder to keep a PNG of each state there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import placeviz as pv
from placeviz.examples.documents import mlp_training as mlp_adam
from placeviz.examples.documents import scoped_graph as hundred_scopes
from placeviz.examples.documents import training_step
from placeviz.examples.will_it_fit import bert_large_dry

pytestmark = pytest.mark.e2e

MAX_FIRST_PAINT_BOXES = 60
PAINTED = '.placeviz-inspector[data-first-paint-ms]:not([data-first-paint-ms=""])'

# Hovers the canvas point by point (synthetic moves, in the page) until the tooltip names
# `title`; returns that point in page coordinates, or null.
FIND_BOX = """(title) => {
  const canvas = document.querySelector('canvas.placeviz-dag');
  const tip = document.querySelector('.placeviz-tooltip');
  const r = canvas.getBoundingClientRect();
  for (let y = 3; y < r.height; y += 5) {
    for (let x = 3; x < r.width; x += 7) {
      const at = { clientX: r.left + x, clientY: r.top + y, bubbles: true };
      canvas.dispatchEvent(new MouseEvent('mousemove', at));
      const first = tip.firstElementChild;
      if (!tip.hidden && first && first.textContent === title) {
        canvas.dispatchEvent(new MouseEvent('mouseleave'));
        return { x: r.left + x, y: r.top + y };
      }
    }
  }
  return null;
}"""

# From a point whose tooltip is `title`, the top-right corner of that box or title strip: walks
# right, then up, one pixel at a time, while the tooltip still names it.
CORNER = """([x, y, title]) => {
  const canvas = document.querySelector('canvas.placeviz-dag');
  const tip = document.querySelector('.placeviz-tooltip');
  const names = (px, py) => {
    canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: px, clientY: py, bubbles: true }));
    return !tip.hidden && tip.firstElementChild?.textContent === title;
  };
  while (names(x + 1, y)) x++;
  while (names(x, y - 1)) y--;
  canvas.dispatchEvent(new MouseEvent('mouseleave'));
  return { x, y };
}"""

# Share of the canvas's pixels that something was drawn on.
PAINTED_SHARE = """() => {
  const canvas = document.querySelector('canvas.placeviz-dag');
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let drawn = 0;
  for (let i = 3; i < data.length; i += 4) drawn += data[i] > 0 ? 1 : 0;
  return drawn / (canvas.width * canvas.height);
}"""


@pytest.fixture
def dag_page(page: Any, standalone_bundle: None, keep_screenshot: Any) -> Iterator[Any]:
    page.keep_dag = lambda name: keep_screenshot(page.locator(".placeviz-area-dag"), name)
    yield page
    assert page.problems == []


def open_page(page: Any, trace: pv.Trace, path: Path) -> dict[str, str]:
    trace.to_html(path)
    page.goto(path.as_uri())
    page.wait_for_selector(PAINTED, state="attached")
    page.wait_for_timeout(100)  # a second frame, once the canvas has its size
    return attributes(page)


def attributes(page: Any) -> dict[str, str]:
    return page.evaluate("() => ({ ...document.querySelector('.placeviz-dag-view').dataset })")


def assert_readable(page: Any, data: dict[str, str], most: int | None, named: bool = True) -> None:
    """Every drawn box inside the canvas (and, if `named`, saying its name), no two labels
    overlapping, pixels on the canvas."""
    visible = int(data["visibleNodes"])
    assert visible >= 1
    if most is not None:
        assert visible <= most, data
    assert int(data["inView"]) == visible, data
    if named:
        assert int(data["labelsDrawn"]) == visible, data
    assert data["labelOverlaps"] == "0", data
    assert page.evaluate(PAINTED_SHARE) > 0.02


def open_group(page: Any, title: str) -> dict[str, str]:
    """Double-click the box or title strip whose tooltip is `title` (a group's name and '/'):
    a folded group opens, an opened one folds."""
    at = page.evaluate(FIND_BOX, title)
    assert at is not None, f"no box {title!r} on the canvas"
    before = attributes(page)["visibleNodes"]
    page.mouse.dblclick(at["x"], at["y"])
    page.wait_for_function(
        "(n) => document.querySelector('.placeviz-dag-view').dataset.visibleNodes !== n", arg=before
    )
    page.wait_for_timeout(100)
    return attributes(page)


def click_toggle(page: Any, title: str) -> dict[str, str]:
    """Click the +/- of the group whose box or title strip's tooltip is `title`."""
    at = page.evaluate(FIND_BOX, title)
    assert at is not None, f"no box or title {title!r} on the canvas"
    corner = page.evaluate(CORNER, [at["x"], at["y"], title])
    before = attributes(page)["visibleNodes"]
    page.mouse.click(corner["x"] - 6, corner["y"] + 6)  # the control sits in the corner
    page.wait_for_function(
        "(n) => document.querySelector('.placeviz-dag-view').dataset.visibleNodes !== n", arg=before
    )
    page.wait_for_timeout(100)
    return attributes(page)


def test_plus_opens_a_group_and_minus_folds_it(dag_page: Any, tmp_path: Path) -> None:
    first = open_page(dag_page, mlp_adam(), tmp_path / "mlp.html")
    opened = click_toggle(dag_page, "layer1/kernel/")  # the variable and its read
    assert int(opened["visibleNodes"]) == int(first["visibleNodes"]) + 1
    assert_readable(dag_page, opened, MAX_FIRST_PAINT_BOXES)
    folded = click_toggle(dag_page, "layer1/kernel/")  # now the opened group's title strip
    assert folded["visibleNodes"] == first["visibleNodes"]
    assert_readable(dag_page, folded, MAX_FIRST_PAINT_BOXES)


def test_mlp_trained_with_adam_opens_folded_and_readable(dag_page: Any, tmp_path: Path) -> None:
    trace = mlp_adam()
    ops = len(pv.get_default_graph().get_operations())
    data = open_page(dag_page, trace, tmp_path / "mlp.html")
    assert data["ops"] == str(ops)
    assert int(data["visibleNodes"]) < ops  # initializers, gradients and Adam are folded aside
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    dag_page.keep_dag("dag-mlp-adam")
    # The side groups are there as boxes, and open.
    data = open_group(dag_page, "gradients/")
    assert_readable(dag_page, data, None)
    dag_page.keep_dag("dag-mlp-adam-gradients")


def test_a_training_step_opens_named_and_stays_named_as_groups_open(
    dag_page: Any, tmp_path: Path
) -> None:
    trace = training_step()
    ops = len(pv.get_default_graph().get_operations())
    data = open_page(dag_page, trace, tmp_path / "step.html")
    assert data["ops"] == str(ops)
    assert int(data["visibleNodes"]) < ops
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    dag_page.keep_dag("dag-training-step")
    # A layer folds (a double-click on its title) and opens again (on its box), a series folds
    # and opens again, Adam opens: each view is named whole.
    first = data
    data = open_group(dag_page, "mlp/dense_1/")
    assert int(data["visibleNodes"]) == int(first["visibleNodes"]) - 2  # 3 ops, 1 box
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    data = open_group(dag_page, "mlp/dense_1/")
    assert data["visibleNodes"] == first["visibleNodes"]
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    folded = click_toggle(dag_page, "mlp/dense_[0-2]/")
    assert int(folded["visibleNodes"]) < int(data["visibleNodes"])
    assert_readable(dag_page, folded, MAX_FIRST_PAINT_BOXES)
    data = click_toggle(dag_page, "mlp/dense_[0-2]/")
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    data = open_group(dag_page, "Adam/")
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    dag_page.keep_dag("dag-training-step-adam")


def test_3000_ops_in_100_scopes_open_as_a_series(dag_page: Any, tmp_path: Path) -> None:
    trace = hundred_scopes()
    ops = len(pv.get_default_graph().get_operations())
    assert ops == 3001
    data = open_page(dag_page, trace, tmp_path / "scopes.html")
    assert data["ops"] == str(ops)
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    dag_page.keep_dag("dag-100-scopes")
    # The series opens into its 100 blocks, all in view; a block opens into its 30 ops.
    data = open_group(dag_page, "block[0-99]/")
    assert int(data["visibleNodes"]) == 1 + 100
    assert_readable(dag_page, data, None)
    dag_page.keep_dag("dag-100-scopes-series")
    # The user opened 130 boxes: all in view, too small on this canvas to name them all.
    data = open_group(dag_page, "block3/")
    assert int(data["visibleNodes"]) == 1 + 99 + 30
    assert_readable(dag_page, data, None, named=False)


def test_bert_large_dry_on_eight_gpus_opens_readable_with_each_gpus_limit(
    dag_page: Any, tmp_path: Path
) -> None:
    """Will it fit (issue 27): BERT-large's training step dry on 8 simulated H100s (22,000 ops)
    reads at first paint, and the memory panel draws each GPU's use against its 80 GiB limit:
    as a line of its own where the peak is over a quarter of it, else named in the legend."""
    trace = bert_large_dry(8)
    ops = len(pv.get_default_graph().get_operations())
    assert ops > 20_000
    data = open_page(dag_page, trace, tmp_path / "bert-large.html")
    assert data["ops"] == str(ops)
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    names = dag_page.evaluate(
        "() => document.querySelector('.placeviz-memory .placeviz-plot').data.map((t) => t.name)"
    )
    for i in range(8):
        drawn = f"GPU:{i}" in names and f"GPU:{i} limit" in names
        assert drawn or f"GPU:{i} · limit 80.0 GiB" in names, names
    dag_page.keep_dag("dag-bert-large-dry")


def test_search_says_when_nothing_matches(dag_page: Any, tmp_path: Path) -> None:
    open_page(dag_page, mlp_adam(), tmp_path / "mlp.html")
    search = dag_page.locator("input.placeviz-search")
    search.fill("no_such_op")
    search.press("Enter")
    status = dag_page.locator(".placeviz-search-status")
    from playwright.sync_api import expect  # imported here: without it the fixtures skip

    expect(status).to_have_text("no op matches “no_such_op”")  # on the next frame


def test_the_wheel_scrolls_the_page_until_the_graph_has_focus(
    dag_page: Any, tmp_path: Path
) -> None:
    open_page(dag_page, hundred_scopes(20), tmp_path / "scopes.html")
    dag_page.evaluate("() => { document.body.style.minHeight = '4000px'; }")
    box = dag_page.locator("canvas.placeviz-dag").bounding_box()
    dag_page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    dag_page.mouse.wheel(0, 300)
    dag_page.wait_for_function("() => window.scrollY > 0")
    assert attributes(dag_page)["inView"] == attributes(dag_page)["visibleNodes"]
    # Once clicked, the graph has focus: the wheel zooms it (in, here) and the page stays.
    box = dag_page.locator("canvas.placeviz-dag").bounding_box()
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    dag_page.mouse.click(*centre)
    scrolled = dag_page.evaluate("() => window.scrollY")
    dag_page.mouse.move(*centre)
    for _ in range(6):
        dag_page.mouse.wheel(0, -400)
    dag_page.wait_for_function(
        "() => { const d = document.querySelector('.placeviz-dag-view').dataset;"
        " return Number(d.inView) < Number(d.visibleNodes); }"
    )
    assert dag_page.evaluate("() => window.scrollY") == scrolled


# Records every text the page's canvases draw, with the font it was drawn in (a test hook added
# before the page's own scripts; the product draws text on the canvas only).
RECORD_TEXT = """(() => {
  window.__drawn = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
    if (this.canvas.classList.contains('placeviz-dag')) {
      window.__drawn.push({ text: String(text), font: this.font });
    }
    return fill.call(this, text, x, y, ...rest);
  };
})()"""


def drawn_texts(page: Any) -> list[dict[str, str]]:
    return page.evaluate("() => window.__drawn")


def three_ops() -> pv.Trace:
    """Two constants and their product on one simulated GPU: the smallest graph worth showing."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(1)
    pv.reset_default_graph()
    a = pv.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
    b = pv.constant([[1.0, 0.0], [0.0, 1.0]], name="b")
    product = pv.matmul(a, b, name="product")
    sess = pv.Session()
    sess.trace_level = pv.RunOptions.FULL_TRACE
    sess.run(product)
    return sess.trace()


def notebook_cell(notebook: str, marker: str) -> str:
    """The code of the cell of a teaching notebook that holds ``marker``, its magic line off."""
    import json

    cells = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / notebook).read_text())
    source = next(
        "".join(cell["source"])
        for cell in cells["cells"]
        if cell["cell_type"] == "code" and marker in "".join(cell["source"])
    )
    return source.split("\n", 1)[1] if source.startswith("%%") else source


def averaged_towers() -> pv.Trace:
    """Notebook 04's section 4 (each tower's gradients averaged on the CPU), as its cell runs
    with ``%%placement --gpus 2``: its last session's trace."""
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    pv.reset_default_graph()
    namespace: dict[str, Any] = {}
    exec(notebook_cell("04_data_parallelism.ipynb", "tower_grads"), namespace)
    sess = namespace["sess"]
    sess.trace_level = pv.RunOptions.FULL_TRACE
    sess.run(
        namespace["train"],
        {namespace["x"]: namespace["data"], namespace["y"]: namespace["data"][:, :1]},
    )
    return sess.trace()


def test_a_three_op_graph_reads_at_the_normal_font_in_a_canvas_its_own_height(
    dag_page: Any, tmp_path: Path
) -> None:
    dag_page.add_init_script(RECORD_TEXT)
    data = open_page(dag_page, three_ops(), tmp_path / "three.html")
    dag_page.keep_dag("dag-three-ops")
    assert_readable(dag_page, data, most=3)
    assert data["visibleNodes"] == "3"
    drawn = drawn_texts(dag_page)  # every paint's
    assert {d["text"] for d in drawn} == {"a", "b", "product"}
    # The inspector's own font size, not the 11 px a big graph's labels get.
    normal = dag_page.evaluate(
        "() => getComputedStyle(document.querySelector('.placeviz-inspector')).fontSize"
    )
    assert {d["font"].split()[0] for d in drawn} == {normal}, (drawn, normal)
    # The canvas is as tall as the two rows of boxes need, not the 480 px room.
    height = dag_page.evaluate("() => document.querySelector('canvas.placeviz-dag').clientHeight")
    assert height == int(data["canvasHeight"])
    assert height < 200, data


def test_the_towers_gradient_scopes_keep_their_tower_and_their_last_name(
    dag_page: Any, tmp_path: Path
) -> None:
    dag_page.add_init_script(RECORD_TEXT)
    data = open_page(dag_page, averaged_towers(), tmp_path / "towers.html")
    dag_page.keep_dag("towers-gradient-scopes")
    assert_readable(dag_page, data, MAX_FIRST_PAINT_BOXES)
    texts = {d["text"] for d in drawn_texts(dag_page)}
    for tower in (0, 1):
        for op in ("MatMul_grad", "Mean_grad", "sub_grad", "Square_grad"):
            # tower_0/…/MatMul_grad: the tower that tells it apart and its distinguishing tail.
            assert any(t.startswith(f"tower_{tower}/") and t.endswith(f"/{op}") for t in texts), (
                op,
                sorted(texts),
            )
    assert not any(t.endswith("gra…") for t in texts), sorted(texts)
    # The dashed border of the ops on the simulated GPUs is keyed.
    assert "simulated" in data["marks"].split()
    keyed = dag_page.evaluate(
        "() => [...document.querySelectorAll('.placeviz-dag-key [data-mark]')]"
        ".map((item) => item.dataset.mark)"
    )
    assert sorted(keyed) == sorted(data["marks"].split())
