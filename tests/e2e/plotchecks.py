"""What every plot of an inspector must show, read from the page: x tick labels no two alike, and
no text (tick labels, axis titles, run marks, legend entries) cut by its plot's edges."""

from __future__ import annotations

from typing import Any

# A plot this narrow (px) may show two short runs far apart with one tick label each: notebook
# 01's plots at 220 px on a 600 px page, 100-150 px between their margins.
NARROW_PLOT_PX = 300


# Per plot drawn under `root`: its panel's class, whether its axis collapses the idle gaps
# between runs, its x tick labels, the texts whose box leaves the plot's, and whether the y
# axis's 0 overlaps an x tick label.
_READ_PLOTS = """(root) => {
  const inside = (r, box) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5 &&
    r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom &&
    b.top < a.bottom;
  return [...root.querySelectorAll('.placeviz-plot')]
    .filter((plot) => plot.querySelector('.main-svg') && plot.getBoundingClientRect().width > 0)
    .map((plot) => {
      const box = plot.getBoundingClientRect();
      const texts = [...plot.querySelectorAll(
        '.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .g-y2title text, ' +
        '.annotation-text, .legendtext')];
      const clipped = texts
        .filter((t) => t.getBoundingClientRect().width > 0)
        .filter((t) => !inside(t.getBoundingClientRect(), box))
        .map((t) => t.textContent);
      const xticks = [...plot.querySelectorAll('.xaxislayer-above .xtick text')];
      const zero = [...plot.querySelectorAll('.yaxislayer-above .ytick text')]
        .filter((t) => t.textContent === '0');
      const overlaps = zero.some((z) => xticks.some((x) =>
        meets(z.getBoundingClientRect(), x.getBoundingClientRect())));
      const panel = plot.closest('.placeviz-panel');
      return {
        panel: panel?.className ?? '',
        gapsCollapsed: panel?.dataset.gapsCollapsed === 'true',
        width: Math.round(box.width),
        xticks: xticks.map((t) => t.textContent),
        clipped,
        zeroOnTick: overlaps,
      };
    });
}"""


def read_plots(root: Any) -> list[dict[str, Any]]:
    """The plots under the Playwright locator ``root`` (one element), as ``_READ_PLOTS`` reads
    them."""
    return list(root.evaluate(_READ_PLOTS))


def read_plots_in_view(inspectors: Any, settle_ms: int = 5_000) -> list[dict[str, Any]]:
    """The plots of every inspector the locator ``inspectors`` finds, each read once it has been
    scrolled into view and its plots have stopped changing: a notebook does not lay out cells out
    of view (their text measures as nothing), so a plot is only what a reader sees once in view."""
    plots: list[dict[str, Any]] = []
    for i in range(inspectors.count()):
        inspector = inspectors.nth(i)
        inspector.scroll_into_view_if_needed()
        seen = read_plots(inspector)
        for _ in range(settle_ms // 250):
            inspector.page.wait_for_timeout(250)
            now = read_plots(inspector)
            if now == seen:
                break
            seen = now
        plots.extend(seen)
    return plots


def plot_problems(plots: list[dict[str, Any]], least_ticks: int = 2) -> list[str]:
    """What is wrong with ``plots``: repeated or too few x tick labels, clipped text, the y
    axis's 0 on an x tick label; empty when nothing is."""
    problems = []
    for plot in plots:
        where = f"{plot['panel']} at {plot['width']} px"
        ticks = plot["xticks"]
        if len(set(ticks)) != len(ticks):
            problems.append(f"{where}: repeated tick labels {ticks}")
        # Past collapsed idle gaps the ticks are round times a step apart inside the runs, so two
        # short runs far apart on a narrow plot may leave room for one label each
        # (timewindow.ts's axisTicks): two is the least there.
        narrow = plot["gapsCollapsed"] and plot["width"] < NARROW_PLOT_PX
        least = min(least_ticks, 2) if narrow else least_ticks
        if len(ticks) < least:
            problems.append(f"{where}: {len(ticks)} tick labels {ticks}")
        if plot["clipped"]:
            problems.append(f"{where}: clipped {plot['clipped']}")
        if plot["zeroOnTick"]:
            problems.append(f"{where}: the y axis's 0 overlaps an x tick label")
    return problems
