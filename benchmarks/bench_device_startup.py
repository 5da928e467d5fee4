"""Device start-up cost per simulated GPU: listing, visibility, a session and its first run.

Start-up should be linear in the number of devices: the per-device cost at 20,000 GPUs should be
about the one at 1,000 (it was quadratic: 20,000 simulated GPUs took 260 s).
Run: python benchmarks/bench_device_startup.py [--counts 1000 20000]
"""

from __future__ import annotations

import argparse
import time

import placeviz as pv


def startup_seconds(count: int) -> float:
    """Seconds from simulating ``count`` GPUs to the end of a session's first run on them."""
    pv.config.reset_devices()
    begin = time.perf_counter()
    pv.config.simulate_gpus(count)
    gpus = pv.config.list_physical_devices("GPU")
    pv.config.set_visible_devices(gpus, "GPU")
    graph = pv.Graph()
    with graph.as_default():
        value = pv.constant(1.0)
    config = pv.ConfigProto(device_count={"GPU": count})
    with pv.Session(graph=graph, config=config) as sess:
        sess.run(value)
    return time.perf_counter() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--counts", type=int, nargs="+", default=[1000, 20000])
    args = parser.parse_args()
    for count in args.counts:
        seconds = startup_seconds(count)
        per_device_us = seconds / count * 1e6
        print(f"{count:>6} GPUs: {seconds:7.3f} s in all, {per_device_us:7.1f} us per device")
    pv.config.reset_devices()


if __name__ == "__main__":
    main()
