"""Modeled overlap of a layer-per-GPU LSTM under dynamic_rnn, per ``parallel_iterations``.

Issue 26's picture: with a 2-layer LSTM whose layer i runs on GPU:i (DeviceWrapper) inside
dynamic_rnn's while loop, TensorFlow lets layer 0 work on time step t + 1 while layer 1 works on
step t when ``parallel_iterations`` > 1. This prints, per ``parallel_iterations``, each GPU's
busy time in the loop, how much of GPU:1's busy time GPU:0 is busy too, and the loop's modeled
span. Values are computed for real (the same for every setting: the checksum); times come from
the roofline model of the simulated H100s.
Run: python benchmarks/bench_loop_pipeline.py [--steps 20] [--batch 64] [--units 1024]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import placeviz as pv
from placeviz.contract import EventKind

Intervals = list[tuple[int, int]]


def _busy(trace: pv.Trace, device_suffix: str) -> Intervals:
    """The device's busy intervals in the loop (ops under a ``while`` scope), merged."""
    ev = trace.events
    names = {d["id"]: d["name"] for d in trace.devices}
    spans = sorted(
        (int(ev["t0"][i]), int(ev["t1"][i]))
        for i in range(len(ev["kind"]))
        if ev["kind"][i] == int(EventKind.OP)
        and names.get(int(ev["device"][i]), "").endswith(device_suffix)
        and "while/" in trace.node_name(int(ev["node"][i]))
        and ev["t1"][i] > ev["t0"][i]
    )
    merged: Intervals = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _overlap(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> int:
    return sum(max(0, min(a1, b1) - max(a0, b0)) for a0, a1 in a for b0, b1 in b)


def run(parallel_iterations: int, steps: int, batch: int, units: int) -> dict[str, float]:
    pv.config.reset_devices()
    pv.config.simulate_gpus(2, profile="H100")
    with pv.Graph().as_default():
        pv.set_random_seed(1)
        data = np.random.default_rng(0).standard_normal((batch, steps, units // 2))
        cells = [
            pv.nn.rnn_cell.DeviceWrapper(pv.nn.rnn_cell.LSTMCell(units), f"/gpu:{i}")
            for i in range(2)
        ]
        outputs, _ = pv.nn.dynamic_rnn(
            pv.nn.rnn_cell.MultiRNNCell(cells),
            pv.constant(data.astype(np.float32)),
            dtype=pv.float32,
            parallel_iterations=parallel_iterations,
        )
        with pv.Session() as sess:
            sess.run(pv.global_variables_initializer())
            value = sess.run(outputs)
            trace = sess.trace()
    gpu0, gpu1 = _busy(trace, "GPU:0"), _busy(trace, "GPU:1")
    return {
        "gpu0_us": sum(b - a for a, b in gpu0) / 1e3,
        "gpu1_us": sum(b - a for a, b in gpu1) / 1e3,
        "overlap_us": _overlap(gpu0, gpu1) / 1e3,
        "span_us": (max(gpu0[-1][1], gpu1[-1][1]) - min(gpu0[0][0], gpu1[0][0])) / 1e3,
        "checksum": float(np.abs(value).sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--units", type=int, default=1024)
    args = parser.parse_args()
    print(
        f"2-layer LSTM ({args.units} units, batch {args.batch}, {args.steps} steps) under "
        "dynamic_rnn, layer i on simulated H100 GPU:i"
    )
    print("parallel_iterations  GPU:0 busy  GPU:1 busy  overlap (of GPU:1's)  loop span")
    for n in (1, 2, 32):
        r = run(n, args.steps, args.batch, args.units)
        share = r["overlap_us"] / r["gpu1_us"]
        print(
            f"{n:19d} {r['gpu0_us']:8.0f} us {r['gpu1_us']:8.0f} us {r['overlap_us']:8.0f} us"
            f" ({share:4.0%}) {r['span_us']:8.0f} us   checksum {r['checksum']:.6f}"
        )


if __name__ == "__main__":
    main()
