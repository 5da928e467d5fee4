"""placeviz against TensorFlow: the same workloads, each framework in fresh processes, alternating.

It measures, on the CPU only, (1) one Session.run of a 2,000-op chain of 64x64 float32 add/mul/sub
ops after warm-up, (2) one Adam training step of a 784-256-256-10 MLP at batch 64 (with TF's fused
softmax cross-entropy, and with a hand-written one that both frameworks can build), (3) building a
20,000-op chain, (4) its first run (placement + compile + run), (5) `gradients` of a 1,000-layer
graph, and (6) the time per eager op around the 50th and the 5,000th op of a chain, so a cost that
grows with the graph shows. Each round starts one process per framework and mode (placeviz graph,
TF graph, placeviz eager, TF eager) running this file with the framework module bound to `tf`
(placeviz itself, or TF 2.21's `tf.compat.v1` after `disable_v2_behavior()`; TF2 itself for eager),
so both see the same machine noise; the table shows per workload the median over rounds of each
framework, the spread (min-max), and the median of the per-round placeviz/TF ratios. Both run with
intra/inter-op threads set alike (1 and 1 by default, BLAS threads too), no GPUs (no simulated
ones; CUDA_VISIBLE_DEVICES=""), TF_CPP_MIN_LOG_LEVEL=3, TF's graph optimizer (grappler) left on.
TF comes from `--tf-python` (default `$PLACEVIZ_TF_PYTHON` or /work/tfvenv/bin/python); without
it only placeviz runs. Run: python benchmarks/bench_vs_tensorflow.py [--quick] [--rounds 5]
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TF_PYTHON = os.environ.get("PLACEVIZ_TF_PYTHON", "/work/tfvenv/bin/python")
RESULT_MARKER = "BENCH-RESULT "
FRAMEWORKS = ("placeviz", "tensorflow")
MODES = ("graph", "eager")
CHAIN_CONSTANTS = (0.001, 0.9999, 0.001)  # add, multiply, subtract: the values stay bounded
EAGER_WINDOW = 25  # ops either side of the op an eager measurement is about


@dataclass(frozen=True)
class Sizes:
    chain_ops: int = 2_000
    big_chain_ops: int = 20_000
    gradient_layers: int = 1_000
    mlp: tuple[int, ...] = (784, 256, 256, 10)
    batch: int = 64
    eager_at: tuple[int, ...] = (50, 5_000)


@dataclass(frozen=True)
class Workload:
    """One measured quantity; `unit` says what one measurement is the time of."""

    key: str
    title: str
    mode: str
    unit: str


WORKLOADS = (
    Workload("chain", "1 chain of 2,000 ops, one run", "graph", "per run"),
    Workload("mlp_fused", "2 MLP Adam step, fused softmax x-entropy", "graph", "per step"),
    Workload("mlp_manual", "2b MLP Adam step, -sum(y*log(softmax))", "graph", "per step"),
    Workload("build", "3 build a 20,000-op chain", "graph", "once"),
    Workload("first_run", "4 its first run (place+compile+run)", "graph", "once"),
    Workload("gradients", "5 gradients of 1,000 layers", "graph", "once"),
    Workload("eager_50", "6 eager op around the 50th op", "eager", "per op"),
    Workload("eager_5000", "6 eager op around the 5,000th op", "eager", "per op"),
)


# --- the workloads, written once against the framework module `tf` ---------------------------


def chain_op(tf: ModuleType, x: Any, i: int, constants: tuple[Any, Any, Any]) -> Any:
    """Op i of the chain: add, mul, sub, mul, ...; a multiply between additive ops, so that
    grappler cannot merge two of them into one."""
    add_c, mul_c, sub_c = constants
    if i % 4 == 0:
        return tf.add(x, add_c)
    if i % 4 == 2:
        return tf.subtract(x, sub_c)
    return tf.multiply(x, mul_c)


def chain(tf: ModuleType, x: Any, n_ops: int, constants: tuple[Any, Any, Any]) -> Any:
    for i in range(n_ops):
        x = chain_op(tf, x, i, constants)
    return x


def chain_constants(tf: ModuleType) -> tuple[Any, Any, Any]:
    return tuple(tf.constant(c, dtype=tf.float32) for c in CHAIN_CONSTANTS)


def chain_input() -> np.ndarray:
    return np.random.default_rng(0).random((64, 64), dtype=np.float32)


def session(tf: ModuleType, graph: Any, threads: int) -> Any:
    config = tf.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    return tf.Session(graph=graph, config=config)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def tf_kernels_run(tf: ModuleType, sess: Any, fetch: Any, feed: dict) -> int | None:
    """How many kernels one TF run executed (shows whether grappler folded the chain)."""
    if not hasattr(tf, "RunOptions") or not hasattr(tf.RunMetadata(), "step_stats"):
        return None
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    sess.run(fetch, feed, options=options, run_metadata=metadata)
    names = {
        node.node_name
        for device in metadata.step_stats.dev_stats
        for node in device.node_stats
        if not node.node_name.startswith("_")
    }
    return len(names)


def run_chain(tf: ModuleType, sizes: Sizes, repeats: int, threads: int) -> dict:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64, 64])
        out = chain(tf, x, sizes.chain_ops, chain_constants(tf))
    feed = {x: chain_input()}
    sess = session(tf, graph, threads)
    for _ in range(3):
        sess.run(out, feed)
    times = [timed(lambda: sess.run(out, feed)) for _ in range(repeats)]
    kernels = tf_kernels_run(tf, sess, out, feed)
    check = float(np.sum(sess.run(out, feed), dtype=np.float64))
    sess.close()
    note = f"{kernels} kernels per run" if kernels is not None else ""
    return {"seconds": statistics.median(times), "check": check, "note": note}


def mlp_loss_fused(tf: ModuleType, logits: Any, labels: Any) -> Any:
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))


def mlp_loss_manual(tf: ModuleType, logits: Any, labels: Any) -> Any:
    return -tf.reduce_mean(tf.reduce_sum(labels * tf.log(tf.nn.softmax(logits)), axis=1))


def run_mlp(
    tf: ModuleType, sizes: Sizes, repeats: int, threads: int, loss_fn: Callable[..., Any]
) -> dict:
    """Weights and data from one NumPy seed, so both frameworks train the same numbers."""
    rng = np.random.default_rng(0)
    widths = sizes.mlp
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [sizes.batch, widths[0]])
        labels = tf.placeholder(tf.float32, [sizes.batch, widths[-1]])
        h = x
        for i, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
            w = tf.Variable(rng.normal(0.0, fan_in**-0.5, (fan_in, fan_out)).astype(np.float32))
            b = tf.Variable(np.zeros(fan_out, np.float32))
            h = tf.matmul(h, w) + b
            if i < len(widths) - 2:
                h = tf.nn.relu(h)
        loss = loss_fn(tf, h, labels)
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        init = tf.global_variables_initializer()
    feed = {
        x: rng.random((sizes.batch, widths[0]), dtype=np.float32),
        labels: np.eye(widths[-1], dtype=np.float32)[rng.integers(0, widths[-1], sizes.batch)],
    }
    sess = session(tf, graph, threads)
    sess.run(init)
    for _ in range(5):
        sess.run(train, feed)
    times = [timed(lambda: sess.run(train, feed)) for _ in range(repeats)]
    check = float(sess.run(loss, feed))
    sess.close()
    return {"seconds": statistics.median(times), "check": check, "note": ""}


def run_build_and_first_run(tf: ModuleType, sizes: Sizes, threads: int) -> dict[str, dict]:
    graph = tf.Graph()
    with graph.as_default():
        start = time.perf_counter()
        x = tf.placeholder(tf.float32, [64, 64])
        out = chain(tf, x, sizes.big_chain_ops, chain_constants(tf))
        built = time.perf_counter() - start
    n_ops = len(graph.get_operations())
    sess = session(tf, graph, threads)
    start = time.perf_counter()
    value = sess.run(out, {x: chain_input()})
    first = time.perf_counter() - start
    sess.close()
    return {
        "build": {"seconds": built, "check": n_ops, "note": f"{n_ops} ops"},
        "first_run": {"seconds": first, "check": float(np.sum(value, dtype=np.float64))},
    }


def run_gradients(tf: ModuleType, sizes: Sizes) -> dict:
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        h = tf.placeholder(tf.float32, [16, 32])
        weights = []
        for _ in range(sizes.gradient_layers):
            w = tf.Variable(rng.normal(0.0, 32**-0.5, (32, 32)).astype(np.float32))
            weights.append(w)
            h = tf.tanh(tf.matmul(h, w))
        loss = tf.reduce_sum(h)
        before = len(graph.get_operations())
        start = time.perf_counter()
        tf.gradients(loss, weights)
        seconds = time.perf_counter() - start
        added = len(graph.get_operations()) - before
    return {"seconds": seconds, "check": added, "note": f"{added} gradient ops"}


def run_eager(tf: ModuleType, sizes: Sizes) -> dict[str, dict]:
    """Time every op of one eager chain; report the median op in a window around each mark."""
    constants = chain_constants(tf)
    x = tf.constant(chain_input())
    n_ops = max(sizes.eager_at) + EAGER_WINDOW
    stamps = [time.perf_counter()]
    for i in range(n_ops):
        x = chain_op(tf, x, i, constants)
        stamps.append(time.perf_counter())
    per_op = np.diff(stamps)
    check = float(np.sum(x.numpy(), dtype=np.float64))
    return {
        f"eager_{at}": {
            "seconds": float(np.median(per_op[at - EAGER_WINDOW : at + EAGER_WINDOW])),
            "check": check,
            "note": f"median of ops {at - EAGER_WINDOW}..{at + EAGER_WINDOW - 1}",
        }
        for at in sizes.eager_at
    }


# --- the worker: one framework, one mode, in a fresh process -----------------------------------


def load_framework(framework: str, mode: str, threads: int) -> tuple[ModuleType, str]:
    """The module the workloads call `tf`, and its version."""
    if framework == "placeviz":
        tf = importlib.import_module("placeviz")
        if mode == "eager":
            tf.enable_eager_execution()
        return tf, f"placeviz from {Path(tf.__file__).parent}"
    tensorflow = importlib.import_module("tensorflow")
    version = f"tensorflow {tensorflow.__version__}"
    if mode == "eager":
        tensorflow.config.threading.set_intra_op_parallelism_threads(threads)
        tensorflow.config.threading.set_inter_op_parallelism_threads(threads)
        return tensorflow, version
    tf1 = tensorflow.compat.v1
    tf1.disable_v2_behavior()
    return tf1, version


def guarded(results: dict, keys: tuple[str, ...], fn: Callable[[], dict]) -> None:
    """Run one workload; a framework that cannot run it records why instead of a time."""
    try:
        outcome = fn()
    except Exception as error:  # a missing API or a failing op is a finding, not a crash
        message = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        outcome = {key: {"error": message} for key in keys}
    if len(keys) == 1 and keys[0] not in outcome:
        outcome = {keys[0]: outcome}
    results.update(outcome)


def worker(framework: str, mode: str, sizes: Sizes, repeats: int, threads: int) -> None:
    tf, version = load_framework(framework, mode, threads)
    results: dict[str, dict] = {}
    if mode == "graph":
        guarded(results, ("chain",), lambda: run_chain(tf, sizes, repeats, threads))
        for key, loss_fn in (("mlp_fused", mlp_loss_fused), ("mlp_manual", mlp_loss_manual)):
            guarded(results, (key,), lambda f=loss_fn: run_mlp(tf, sizes, repeats, threads, f))
        guarded(
            results, ("build", "first_run"), lambda: run_build_and_first_run(tf, sizes, threads)
        )
        guarded(results, ("gradients",), lambda: run_gradients(tf, sizes))
    else:
        keys = tuple(f"eager_{at}" for at in sizes.eager_at)
        guarded(results, keys, lambda: run_eager(tf, sizes))
    print(RESULT_MARKER + json.dumps({"version": version, "results": results}), flush=True)


# --- the driver: alternate fresh processes and tabulate ----------------------------------------


def child_environment(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PLACEVIZ_SIMULATED_GPUS", None)
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def spawn(python: str, framework: str, mode: str, args: argparse.Namespace) -> dict:
    command = [
        python,
        str(Path(__file__).resolve()),
        "--worker",
        framework,
        mode,
        "--repeats",
        str(args.repeats),
        "--threads",
        str(args.threads),
    ]
    try:
        done = subprocess.run(
            command,
            env=child_environment(args.threads),
            capture_output=True,
            text=True,
            timeout=args.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"{framework} {mode} process ran past {args.timeout} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"failed": f"{framework} {mode} process exited {done.returncode}: {tail}"}


def tf_available(python: str) -> str | None:
    """None when `python` imports TensorFlow, else why not."""
    if not Path(python).exists():
        return f"no TensorFlow python at {python}"
    probe = subprocess.run(
        [python, "-c", "import tensorflow"],
        env=child_environment(1),
        capture_output=True,
        text=True,
        check=False,
    )
    return None if probe.returncode == 0 else f"{python} cannot import tensorflow"


def format_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def summarize(times: list[float]) -> str:
    if not times:
        return "-"
    low, high = format_seconds(min(times)), format_seconds(max(times))
    return f"{format_seconds(statistics.median(times))} ({low}-{high})"


def tabulate(rounds: list[dict[str, dict]], frameworks: tuple[str, ...]) -> list[str]:
    """One row per workload: each framework's median (min-max), then the paired ratio."""
    lines = []
    header = f"{'workload':<42}{'unit':<9}"
    header += "".join(f"{name:<26}" for name in frameworks) + "placeviz/TF (min-max)"
    lines.append(header)
    errors: dict[tuple[str, str], str] = {}
    notes: dict[tuple[str, str], str] = {}
    checks: dict[str, dict[str, list]] = {}
    for workload in WORKLOADS:
        times: dict[str, list[float]] = {name: [] for name in frameworks}
        ratios = []
        for one_round in rounds:
            entries = {name: one_round.get(name, {}).get(workload.key, {}) for name in frameworks}
            for name, entry in entries.items():
                if "error" in entry:
                    errors[workload.key, name] = entry["error"]
                if "seconds" in entry:
                    times[name].append(entry["seconds"])
                    checks.setdefault(workload.key, {}).setdefault(name, []).append(
                        entry.get("check")
                    )
                if entry.get("note"):
                    notes[workload.key, name] = entry["note"]
            if all("seconds" in entry for entry in entries.values()) and len(frameworks) == 2:
                ratios.append(entries["placeviz"]["seconds"] / entries["tensorflow"]["seconds"])
        row = f"{workload.title:<42}{workload.unit:<9}"
        row += "".join(f"{summarize(times[name]):<26}" for name in frameworks)
        if ratios:
            row += f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        else:
            row += "n/a"
        lines.append(row)
    if notes:
        lines.append("")
        lines.append("notes (last round):")
        lines += [f"  {key} {name}: {note}" for (key, name), note in notes.items()]
    lines.append("")
    lines.append("same numbers? (last value each framework computed: sum of outputs, loss, ops)")
    for key, by_name in checks.items():
        lines.append(
            f"  {key}: " + ", ".join(f"{name} {values[-1]!r}" for name, values in by_name.items())
        )
    if errors:
        lines.append("")
        lines.append("could not run:")
        lines += [f"  {key} in {name}: {message}" for (key, name), message in errors.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tf-python", default=DEFAULT_TF_PYTHON)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per process")
    parser.add_argument("--threads", type=int, default=1, help="intra- and inter-op threads")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per process")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 10 repeats")
    parser.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.repeats = 2, 10
    if args.worker:
        framework, mode = args.worker
        worker(framework, mode, Sizes(), args.repeats, args.threads)
        return

    missing = tf_available(args.tf_python)
    frameworks = FRAMEWORKS if missing is None else ("placeviz",)
    if missing:
        print(f"{missing}: measuring placeviz only (set --tf-python or $PLACEVIZ_TF_PYTHON)")
    pythons = {"placeviz": sys.executable, "tensorflow": args.tf_python}
    print(
        f"{args.rounds} rounds x (graph, eager) x {frameworks}, a fresh process each, alternating;"
        f" {args.repeats} timed repeats per process; intra/inter-op threads {args.threads};"
        f" CPU only; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    started = time.perf_counter()
    rounds: list[dict[str, dict]] = []
    versions: dict[str, str] = {}
    for index in range(args.rounds):
        one_round: dict[str, dict] = {}
        for mode in MODES:
            for framework in frameworks:
                outcome = spawn(pythons[framework], framework, mode, args)
                if "failed" in outcome:
                    print(f"round {index + 1}: {outcome['failed']}")
                    continue
                versions[framework] = outcome["version"]
                one_round.setdefault(framework, {}).update(outcome["results"])
        rounds.append(one_round)
        print(f"round {index + 1}/{args.rounds} done at {time.perf_counter() - started:.0f} s")
    print("; ".join(versions.values()))
    print(f"load average at the end {os.getloadavg()[0]:.2f}; median (min-max) over rounds")
    print("\n".join(tabulate(rounds, frameworks)))


if __name__ == "__main__":
    main()
