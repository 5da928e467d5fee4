"""One training step of each model of the zoo, placeviz against TensorFlow 2.21, side by side.

The models (``placeviz/examples/zoo.py``: cifar10's towers, a ResNet with batch norm, a BERT-style
encoder, an LSTM language model unrolled by ``static_rnn``, a layer per device) are written once
against the module ``tf``, so both frameworks build the same graph. Everything runs on the CPU (no
GPUs, simulated or real: every device scope names ``/cpu:0``), one thread each (intra/inter-op and
BLAS), TF's graph optimizer left on. Each round starts one fresh process per framework, alternating,
so both see the same machine noise; in each process a model gets three warm-up steps and then
``--repeats`` timed steps, whose median is the round's figure. The table gives, per model, the ops
in its graph, each framework's median over rounds (min-max) and the median of the per-round
placeviz/TF ratios (the issue's target: at most 2x on cifar10 and ResNet). TF comes from
``--tf-python`` (``$PLACEVIZ_TF_PYTHON`` or /work/tfvenv/bin/python); without it only placeviz runs.
Run: python benchmarks/bench_models.py [--rounds 5] [--repeats 10] [--models cifar10,resnet]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_vs_tensorflow import (
    DEFAULT_TF_PYTHON,
    RESULT_MARKER,
    child_environment,
    load_framework,
    session,
    summarize,
    tf_available,
)

from placeviz.examples.zoo import ZOO

WARMUP_STEPS = 3


def time_model(tf: Any, name: str, repeats: int, threads: int) -> dict[str, Any]:
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        model = ZOO[name](tf, gpus=0)
        with session(tf, graph, threads) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(WARMUP_STEPS):
                sess.run(model.train_op, model.feed)
            steps = []
            for _ in range(repeats):
                start = time.perf_counter()
                sess.run(model.train_op, model.feed)
                steps.append(time.perf_counter() - start)
            loss = float(sess.run(model.loss, model.feed))
    return {"step": statistics.median(steps), "ops": len(graph.get_operations()), "loss": loss}


def worker(framework: str, models: list[str], repeats: int, threads: int) -> None:
    tf, version = load_framework(framework, "graph", threads)
    results: dict[str, Any] = {}
    for name in models:
        try:
            results[name] = time_model(tf, name, repeats, threads)
        except Exception as error:  # a missing API is a finding, not a crash
            results[name] = {"error": f"{type(error).__name__}: {error}".splitlines()[0][:200]}
    print(RESULT_MARKER + json.dumps({"version": version, "results": results}), flush=True)


def spawn(python: str, framework: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [python, str(Path(__file__).resolve()), "--worker", framework]
    command += ["--models", ",".join(args.models), "--repeats", str(args.repeats)]
    command += ["--threads", str(args.threads)]
    env = child_environment(args.threads)
    env["TF_USE_LEGACY_KERAS"] = "1"  # tf.compat.v1.layers needs Keras 2 (tf_keras)
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"{framework} ran past {args.timeout} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"failed": f"{framework} exited {done.returncode}: {tail}"}


def tabulate(rounds: list[dict[str, dict]], models: list[str], frameworks: list[str]) -> str:
    lines = ["| model | ops (placeviz / TF) | placeviz step | TF step | placeviz / TF |"]
    lines.append("|---|---|---|---|---|")
    for name in models:
        steps: dict[str, list[float]] = {f: [] for f in frameworks}
        ops: dict[str, int | str] = {f: "-" for f in frameworks}
        ratios: list[float] = []
        errors: list[str] = []
        for one in rounds:
            figures = {f: one[f].get("results", {}).get(name, {}) for f in frameworks}
            errors += [f"{f}: {one[f]['failed']}" for f in frameworks if "failed" in one[f]]
            errors += [f"{f}: {v['error']}" for f, v in figures.items() if "error" in v]
            for f, value in figures.items():
                if "step" in value:
                    steps[f].append(value["step"])
                    ops[f] = value["ops"]
            if all("step" in figures[f] for f in frameworks) and len(frameworks) == 2:
                ratios.append(figures["placeviz"]["step"] / figures["tensorflow"]["step"])
        ratio = f"{statistics.median(ratios):.2f}x" if ratios else "-"
        tf_step = summarize(steps["tensorflow"]) if "tensorflow" in steps else "-"
        op_counts = " / ".join(str(ops[f]) for f in frameworks)
        lines.append(
            f"| {name} | {op_counts} | {summarize(steps['placeviz'])} | {tf_step} | {ratio} |"
        )
        for error in sorted(set(errors)):
            lines.append(f"|   {name} | {error} | | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=("placeviz", "tensorflow"), help=argparse.SUPPRESS)
    parser.add_argument("--models", default=",".join(ZOO), type=lambda s: s.split(","))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--tf-python", default=DEFAULT_TF_PYTHON)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.models, args.repeats, args.threads)
        return
    frameworks = ["placeviz"]
    missing = tf_available(args.tf_python)
    if missing is None:
        frameworks.append("tensorflow")
    else:
        print(f"TensorFlow not measured: {missing}", file=sys.stderr)
    pythons = {"placeviz": sys.executable, "tensorflow": args.tf_python}
    rounds = []
    for index in range(args.rounds):
        order = frameworks if index % 2 == 0 else frameworks[::-1]
        rounds.append({f: spawn(pythons[f], f, args) for f in order})
    versions = {r[f].get("version") for r in rounds for f in frameworks} - {None}
    print(f"{args.rounds} rounds x {args.repeats} steps, {args.threads} thread(s); {versions}")
    print(tabulate(rounds, args.models, frameworks))


if __name__ == "__main__":
    main()
