"""How long each teaching notebook takes to run top to bottom, as a student's "Run All" does.

Each notebook of notebooks/ runs in a fresh kernel of this interpreter (nbclient), on the
simulated GPUs its cells ask for, in a scratch directory. Printed: seconds per notebook (kernel
start included) against the 60 s a lesson may take, and the slowest cell of each.

Run: python benchmarks/bench_notebooks.py [NAME ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LIMIT_S = 60.0


def run(path: Path) -> tuple[float, str, float]:
    """(seconds in all, the slowest cell's id, its seconds)."""
    notebook = nbformat.read(path, as_version=4)
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="placeviz-bench-") as workdir:
        client = nbclient.NotebookClient(
            notebook, kernel_name="python3", timeout=600, resources={"metadata": {"path": workdir}}
        )
        started = time.perf_counter()
        with client.setup_kernel():
            for index, cell in enumerate(notebook.cells):
                began = time.perf_counter()
                client.execute_cell(cell, index)
                timings[cell.get("id", str(index))] = time.perf_counter() - began
        total = time.perf_counter() - started
    slowest = max(timings, key=timings.__getitem__)
    return total, slowest, timings[slowest]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="notebook file names (default: all)")
    args = parser.parse_args()
    paths = [NOTEBOOKS / n for n in args.names] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        total, slowest, took = run(path)
        verdict = "ok" if total <= LIMIT_S else f"over {LIMIT_S:.0f} s"
        print(f"{path.name:40} {total:6.1f} s  ({verdict}; slowest cell {slowest}: {took:.1f} s)")


if __name__ == "__main__":
    main()
