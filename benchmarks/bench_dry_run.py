"""Dry runs at scale (issue 27): a BERT-large training step on 8 simulated H100s, and a graph of
about 100,000 ops, placed and stepped without computing or allocating anything.

BERT-large: 24 layers, width 1024, 16 heads, sequence 512, batch 64, Adam, its layers split over
the GPUs (zoo.bert_encoder). The first dry run is the initializer's: it places the whole graph
and plans the initializer; the first step plans and simulates the step; later steps reuse the
plan. Process growth is the resident memory the session added (the graph's own is reported
apart). Also the same step on one H100, where it does not fit, and a 100,000-op graph.
Run: python benchmarks/bench_dry_run.py [--placer simple|cost] [--layers 24] [--big-layers 110]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.examples import zoo

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE / 2**20


def bert(gpus: int, layers: int, batch: int) -> zoo.Model:
    return zoo.bert_encoder(
        pv, gpus=gpus, batch=batch, seq=512, width=1024, heads=16, layers=layers, vocab=30522
    )


def step_figures(sess: pv.Session) -> tuple[float, dict[str, int]]:
    """The last run's modeled length (s) and each GPU's peak bytes."""
    events = sess.trace(runs=1).events
    run = events["kind"] == int(EventKind.RUN)
    length = float((events["t1"][run] - events["t0"][run]).max()) / 1e9
    peaks = {
        d.name.rsplit("/", 1)[-1]: sess._plans.peak_bytes.get(d.name, 0)
        for d in sess.devices
        if d.device_type == "GPU"
    }
    return length, peaks


def timed(label: str, fn: Any) -> Any:
    start = time.perf_counter()
    result = fn()
    print(f"  {label:<44} {time.perf_counter() - start:8.2f} s")
    return result


def dry_step(gpus: int, layers: int, batch: int, placer: str, trace_level: int) -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(gpus, "H100")
    before = rss_mb()
    graph = pv.Graph()
    with graph.as_default():
        start = time.perf_counter()
        model = bert(gpus, layers, batch)
        print(
            f"BERT-large ({layers} layers, batch {batch}) on {gpus} simulated H100(s), "
            f"placer={placer}, "
            f"trace_level={trace_level}: {len(graph.get_operations()):,} ops, graph built in "
            f"{time.perf_counter() - start:.1f} s (+{rss_mb() - before:.0f} MB)"
        )
        feed = {t: pv.ShapedArray(v.shape, t.dtype) for t, v in model.feed.items()}
        options = pv.RunOptions(trace_level=trace_level)
        config = pv.ConfigProto(dry_run=True, placer=placer, allow_soft_placement=True)
        session_start = rss_mb()
        sess = pv.Session(config=config)
        init = pv.global_variables_initializer()
        first = time.perf_counter()
        timed("first dry run: place every op, the initializer", lambda: sess.run(init))
        fetches = [model.train_op, model.loss]
        try:
            timed(
                "first dry step: plan and simulate",
                lambda: sess.run(fetches, feed, options=options),
            )
        except pv.errors.ResourceExhaustedError as exc:
            print(f"  out of memory: {str(exc)[:400]}...")
            return
        print(f"  {'first dry run and step together':<44} {time.perf_counter() - first:8.2f} s")
        for _ in range(3):
            timed("later dry step", lambda: sess.run(fetches, feed, options=options))
        if trace_level >= pv.RunOptions.FULL_TRACE:  # what the inspector reads at first paint
            trace = timed("trace of the last run", lambda: sess.trace(runs=1))
            document = timed("its placement document", trace.to_document)
            print(
                f"  {len(trace):,} events, {len(document['nodes']):,} nodes in the document "
                f"({len(json.dumps(document)) / 2**20:.0f} MiB of JSON)"
            )
        length, peaks = step_figures(sess)
        print(f"  process growth (session)                     {rss_mb() - session_start:8.0f} MB")
        print(f"  process growth (graph and session)           {rss_mb() - before:8.0f} MB")
        print(f"  modeled step                                 {length * 1e3:8.1f} ms")
        limit = next(d.memory_limit for d in sess.devices if d.device_type == "GPU")
        print(
            "  peak per GPU (GiB, limit "
            f"{limit / 2**30:.0f}): "
            + ", ".join(f"{name} {peak / 2**30:.1f}" for name, peak in peaks.items())
        )
        sess.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--placer", default="simple", choices=["simple", "cost"])
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--big-layers", type=int, default=110, help="about 100,000 ops")
    parser.add_argument("--only-bert", action="store_true", help="BERT-large on 8 GPUs only")
    args = parser.parse_args()
    dry_step(8, args.layers, 64, args.placer, pv.RunOptions.NO_TRACE)
    if args.only_bert:
        return
    dry_step(8, args.layers, 64, args.placer, pv.RunOptions.FULL_TRACE)
    dry_step(1, args.layers, 64, args.placer, pv.RunOptions.NO_TRACE)
    dry_step(8, args.big_layers, 8, args.placer, pv.RunOptions.NO_TRACE)


if __name__ == "__main__":
    main()
