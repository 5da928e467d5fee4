"""One Adam step of an MLP on local clusters of placeviz and of TensorFlow 2.21, side by side.

Per configuration (one process; 2 ps + 2 workers; 1 ps + 8 workers; 4 ps + 4 workers) both
frameworks build the same graph (benchmarks/_cluster_graph.py: the MLP, variables spread over the
ps tasks by `replica_device_setter`, the session on worker 0) and time the same steps after the
same warm-up. placeviz's cluster is `pv.test.create_local_cluster`: a `placeviz server` process
per task and a Dask scheduler on loopback, measured in this process. TensorFlow's is
`tf.test.create_local_cluster` (in-process gRPC servers), measured by benchmarks/tf_cluster_step.py
in a fresh process of `--tf-python` per measurement. Both run CPU only (`device_count={'GPU': 0}`,
CUDA_VISIBLE_DEVICES=""). Each round measures every configuration in both frameworks, one after
the other, the first of the two alternating between rounds, so both see the same machine noise.
placeviz's modules are compiled to bytecode first, as an installed copy's are (TensorFlow's are).

Printed: per configuration the median over rounds of each framework's median step time, the
median of the per-round placeviz/TF ratios, each cluster's start time (the create_local_cluster
call), against the targets (ratio <= 1.0, start <= 1 s); then TensorFlow's step with each task a
`tf.distribute.Server` process of its own and the client in another, as placeviz's tasks run (and
a real cluster), against placeviz's of the same round; then the same step's messages replayed
between bare Dask servers (benchmarks/_dask_floor.py: no kernels, events or placeviz), alone and
with each stage busy for as long as its kernels ran in placeviz's step, or in TensorFlow's traced
step of the same round, against TensorFlow's step: the floor Dask's comms set; then, for
placeviz, the overhead per op and the bytes that crossed between tasks in one step (Dask's
transfer log), by direction.

Run: python benchmarks/bench_cluster.py [--steps 30] [--rounds 3] [--configs 1,2+2,1+8,4+4]
     [--tf-python /work/tfvenv/bin/python] [--widths 784,256,256,10] [--batch 64]
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _cluster_graph import RESULT_MARKER, build, inputs, timed_steps
from _dask_floor import floor_spec
from _dask_floor import measure as floor_step

import placeviz as pv
from placeviz.contract import EventKind

TF_SCRIPT = Path(__file__).resolve().parent / "tf_cluster_step.py"
DEFAULT_TF_PYTHON = "/work/tfvenv/bin/python"
VERSION = f"placeviz from {Path(pv.__file__).parent}"
STEP_RATIO_TARGET = 1.0
PROCESSES = "tensorflow, a process per task"
START_TARGET_SECONDS = 1.0


@dataclass(frozen=True)
class Config:
    """`ps` + `workers` tasks; no workers: one process, no cluster."""

    key: str
    ps: int
    workers: int

    @property
    def title(self) -> str:
        if not self.workers:
            return "one process"
        return f"{self.ps} ps + {self.workers} workers"


CONFIGS = {
    c.key: c
    for c in (Config("1", 0, 0), Config("2+2", 2, 2), Config("1+8", 1, 8), Config("4+4", 4, 4))
}


@dataclass
class Measurement:
    step_seconds: float
    start_seconds: float | None
    ops: int
    version: str
    moved: dict[str, int] | None = None
    kernel_ns: dict[str, int] | None = None  # TF's: each op's kernel time in a traced step
    # placeviz's: the step's messages (_dask_floor.py), and their replay between bare Dask
    # servers by kernels' time: none, placeviz's, TF's of the same round
    floor: dict[str, Any] | None = None
    floor_seconds: dict[str, float] | None = None


def crossed(trace: pv.Trace) -> dict[str, int]:
    """Bytes of the last run's transfers between tasks, by 'from task -> to task'."""
    names = [d["name"] for d in trace.devices]
    events = trace.events
    moved: dict[str, int] = {}
    for kind, device, peer, size in zip(
        events["kind"], events["device"], events["peer"], events["bytes"]
    ):
        if kind != int(EventKind.TRANSFER) or peer < 0:
            continue
        src, dst = (names[i].split("/device:")[0].replace("/replica:0", "") for i in (peer, device))
        if src != dst:
            moved[f"{src} -> {dst}"] = moved.get(f"{src} -> {dst}", 0) + int(size)
    return moved


def measure_placeviz(config: Config, args: argparse.Namespace) -> Measurement:
    widths = [int(w) for w in args.widths.split(",")]
    data, labels = inputs(widths, args.batch)
    if not config.workers:
        graph, x, y, train, init = build(pv, widths, args.batch, None)
        with pv.Session(graph=graph) as sess:
            sess.run(init)
            times = timed_steps(sess, train, {x: data, y: labels}, args.steps, args.warmup)
        return Measurement(statistics.median(times), None, len(graph.get_operations()), VERSION)
    cpu_only = pv.ConfigProto(device_count={"GPU": 0})
    start = time.perf_counter()
    workers, ps = pv.test.create_local_cluster(
        config.workers, config.ps, worker_config=cpu_only, ps_config=cpu_only
    )
    started = time.perf_counter() - start
    try:
        graph, x, y, train, init = build(pv, widths, args.batch, workers[0].cluster_spec)
        with pv.Session(workers[0].target, graph=graph) as sess:
            sess.run(init)
            times = timed_steps(sess, train, {x: data, y: labels}, args.steps, args.warmup)
            moved = crossed(sess.trace(runs=1))
            spec = floor_spec(sess, train)
    finally:
        for server in itertools.chain(workers, ps):
            server.stop()
    ops = len(graph.get_operations())
    return Measurement(statistics.median(times), started, ops, VERSION, moved, floor=spec)


def measure_floor(placeviz: Measurement, tf: Measurement | None, args: argparse.Namespace) -> None:
    """placeviz's step messages replayed on bare Dask servers: alone, with each stage busy for
    as long as placeviz's kernels took, and as long as TensorFlow's took in the same round."""
    spec = placeviz.floor
    assert spec is not None
    kernels = {"none": None, "placeviz": spec["placeviz_kernel_ns"]}
    if tf is not None and tf.kernel_ns:
        kernels["tensorflow"] = tf.kernel_ns
    placeviz.floor_seconds = {
        name: floor_step(spec, args.steps, args.warmup, times) for name, times in kernels.items()
    }


def compile_placeviz() -> str:
    """Compile placeviz's modules to bytecode before any is timed, as installing a package does.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (as on our build machines), an editable install is
    never compiled: every process would compile placeviz from source (0.3 s of a task's 0.4 s
    import, measured), a cost no installed copy has, and TensorFlow's side (a venv's site-packages,
    compiled by pip) does not pay either.
    """
    compileall.compile_dir(Path(pv.__file__).parent, quiet=1)
    unset = "unset" if not os.environ.get("PYTHONDONTWRITEBYTECODE") else "set"
    return f"placeviz's bytecode compiled first (PYTHONDONTWRITEBYTECODE {unset})"


def tf_environment() -> dict[str, str]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PLACEVIZ_SIMULATED_GPUS", None)
    return env


def measure_tensorflow(
    python: str, config: Config, args: argparse.Namespace, processes: bool = False
) -> Measurement | str:
    """TF's measurement from a fresh process (its servers end with it), or why there is none;
    ``processes``: each task a server process of its own."""
    command = [python, str(TF_SCRIPT), "--workers", str(config.workers)]
    command += ["--ps", str(config.ps), "--steps", str(args.steps), "--warmup", str(args.warmup)]
    command += ["--widths", args.widths, "--batch", str(args.batch)]
    command += ["--processes"] if processes else []
    try:
        done = subprocess.run(
            command,
            env=tf_environment(),
            capture_output=True,
            text=True,
            timeout=args.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:  # subprocess.run has killed it
        return f"TF process ran past {args.timeout} s"
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            result = json.loads(line[len(RESULT_MARKER) :])
            return Measurement(
                result["step_seconds"],
                result["start_seconds"],
                result["ops"],
                result["version"],
                kernel_ns=result.get("kernel_ns"),
            )
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return f"TF process exited {done.returncode}: {tail}"


def tf_python(given: str | None) -> str | None:
    """TensorFlow's interpreter, or None (said) when none was given and the default is absent;
    one given but absent is an error, not a silent skip."""
    if given is None:
        if Path(DEFAULT_TF_PYTHON).exists():
            return DEFAULT_TF_PYTHON
        print(f"TensorFlow's side skipped: no {DEFAULT_TF_PYTHON} (give --tf-python)")
        return None
    if not Path(given).exists():
        raise SystemExit(f"--tf-python {given} does not exist")
    return given


def spread(values: list[float], scale: float, digits: int) -> str:
    if not values:
        return "-"
    low, mid, high = (
        f"{v * scale:.{digits}f}" for v in (min(values), statistics.median(values), max(values))
    )
    return f"{mid} ({low}-{high})" if len(values) > 1 else mid


def tabulate(
    configs: list[Config], rounds: list[dict[str, dict[str, Measurement]]], with_tf: bool
) -> list[str]:
    frameworks = ("placeviz", "tensorflow") if with_tf else ("placeviz",)
    header = f"{'configuration':<20}{'placeviz ms/step':<24}"
    if with_tf:
        header += f"{'TF ms/step':<24}{'pv/TF':<22}"
    header += f"{'placeviz start s':<22}" + ("TF start s" if with_tf else "")
    lines = [header]
    verdicts = []
    for config in configs:
        by = {
            name: [r[name][config.key] for r in rounds if config.key in r.get(name, {})]
            for name in frameworks
        }
        steps = {name: [m.step_seconds for m in by[name]] for name in frameworks}
        starts = {
            name: [m.start_seconds for m in by[name] if m.start_seconds is not None]
            for name in frameworks
        }
        row = f"{config.title:<20}{spread(steps['placeviz'], 1e3, 2):<24}"
        ratios = [
            r["placeviz"][config.key].step_seconds / r["tensorflow"][config.key].step_seconds
            for r in rounds
            if with_tf and all(config.key in r.get(name, {}) for name in frameworks)
        ]
        if with_tf:
            row += f"{spread(steps['tensorflow'], 1e3, 2):<24}{spread(ratios, 1, 2):<22}"
        row += f"{spread(starts['placeviz'], 1, 2):<22}"
        if with_tf:
            row += spread(starts["tensorflow"], 1, 2)
        lines.append(row)
        if ratios:
            ratio = statistics.median(ratios)
            met = "met" if ratio <= STEP_RATIO_TARGET else "NOT met"
            verdicts.append(
                f"  {config.title}: step pv/TF {ratio:.2f} <= {STEP_RATIO_TARGET}: {met}"
            )
        if starts["placeviz"]:
            start = statistics.median(starts["placeviz"])
            met = "met" if start <= START_TARGET_SECONDS else "NOT met"
            verdicts.append(
                f"  {config.title}: placeviz start {start:.2f} s <= {START_TARGET_SECONDS} s: {met}"
            )
    ops = {name: {m.ops for r in rounds for m in r.get(name, {}).values()} for name in frameworks}
    lines.append("")
    lines.append(
        "graph ops (one process / cluster): "
        + "; ".join(f"{name} {sorted(counts)}" for name, counts in ops.items())
    )
    lines.append("targets (median over rounds):")
    lines += verdicts
    return lines


def against_processes(
    configs: list[Config], rounds: list[dict[str, dict[str, Measurement]]]
) -> list[str]:
    """placeviz's step against TensorFlow's with a server process per task, round by round."""
    lines = [
        "TensorFlow with a tf.distribute.Server process per task (the client in another):",
        f"{'configuration':<20}{'TF ms/step':<24}{'pv/TF':<22}",
    ]
    for config in configs:
        paired = [
            (r["placeviz"][config.key], r[PROCESSES][config.key])
            for r in rounds
            if config.key in r.get(PROCESSES, {}) and config.key in r["placeviz"]
        ]
        if not paired:
            continue
        steps = [theirs.step_seconds for _, theirs in paired]
        ratios = [ours.step_seconds / theirs.step_seconds for ours, theirs in paired]
        lines.append(f"{config.title:<20}{spread(steps, 1e3, 2):<24}{spread(ratios, 1, 2):<22}")
    return lines if len(lines) > 2 else []


def against_dask(
    configs: list[Config], rounds: list[dict[str, dict[str, Measurement]]]
) -> list[str]:
    """What Dask's comms alone cost the same step, and that plus the kernels' time (placeviz's,
    TensorFlow's): what a step could take at best on Dask, against TensorFlow's of the round."""
    lines = [
        "The same step's messages between bare Dask servers (benchmarks/_dask_floor.py): alone,",
        "and with each stage busy for as long as its kernels ran in placeviz's, or TF's, step:",
        f"{'configuration':<20}{'messages ms/step':<22}{'+ pv kernels':<22}{'+ TF kernels':<22}"
        f"{'(+ TF kernels)/TF':<22}",
    ]
    for config in configs:
        floors = [
            (r["placeviz"][config.key].floor_seconds, r.get("tensorflow", {}).get(config.key))
            for r in rounds
            if r.get("placeviz", {}).get(config.key) and r["placeviz"][config.key].floor_seconds
        ]
        if not floors:
            continue
        columns = [
            [floor[name] for floor, _ in floors if floor and name in floor]
            for name in ("none", "placeviz", "tensorflow")
        ]
        ratios = [
            floor["tensorflow"] / tf.step_seconds
            for floor, tf in floors
            if floor and tf and "tensorflow" in floor
        ]
        lines.append(
            f"{config.title:<20}"
            + "".join(f"{spread(column, 1e3, 2):<22}" for column in columns)
            + spread(ratios, 1, 2)
        )
    return lines if len(lines) > 3 else []


def placeviz_details(
    configs: list[Config], rounds: list[dict[str, dict[str, Measurement]]]
) -> list[str]:
    """Per cluster: the step's overhead per op against one process, and the bytes it moved."""
    local = [r["placeviz"]["1"] for r in rounds if "1" in r.get("placeviz", {})]
    lines = []
    for config in configs:
        runs = [r["placeviz"][config.key] for r in rounds if config.key in r.get("placeviz", {})]
        if not config.workers or not runs:
            continue
        last = runs[-1]
        lines.append(f"placeviz {config.title} (last round):")
        if local:
            one = statistics.median(m.step_seconds for m in local)
            many = statistics.median(m.step_seconds for m in runs)
            lines.append(f"  overhead per op of the step: {(many - one) / last.ops * 1e6:.0f} us")
        moved = last.moved or {}
        lines.append(f"  bytes between tasks per step: {sum(moved.values()):,}")
        for direction, size in sorted(moved.items()):
            lines.append(f"    {direction:<40} {size:>12,}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per measurement")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps before them")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of both sides")
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help=f"ps+workers, of {', '.join(CONFIGS)}"
    )
    parser.add_argument("--tf-python", default=None, help=f"default {DEFAULT_TF_PYTHON}")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per TF process")
    parser.add_argument("--widths", default="784,256,256,10")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    unknown = [key for key in args.configs.split(",") if key not in CONFIGS]
    if unknown:
        parser.error(f"unknown --configs {unknown}; known: {', '.join(CONFIGS)}")
    configs = [CONFIGS[key] for key in args.configs.split(",")]
    python = tf_python(args.tf_python)

    pv.config.simulate_gpus(0)
    print(compile_placeviz())
    print(
        f"MLP {args.widths}, batch {args.batch}, Adam; {args.steps} steps after {args.warmup},"
        f" {args.rounds} rounds; CPU only; load average {os.getloadavg()[0]:.2f}"
        f" on {os.cpu_count()} cores"
    )
    started = time.perf_counter()
    rounds: list[dict[str, dict[str, Measurement]]] = []
    for index in range(args.rounds):
        one_round: dict[str, dict[str, Measurement]] = {
            "placeviz": {},
            "tensorflow": {},
            PROCESSES: {},
        }
        order = ("placeviz", "tensorflow", PROCESSES)
        for config in configs:
            for name in order if index % 2 == 0 else order[::-1]:
                if name == "placeviz":
                    one_round[name][config.key] = measure_placeviz(config, args)
                elif python and (name == "tensorflow" or config.workers):
                    outcome = measure_tensorflow(python, config, args, name == PROCESSES)
                    if isinstance(outcome, str):
                        print(f"round {index + 1}, {config.title}: {outcome}")
                    else:
                        one_round[name][config.key] = outcome
            if config.workers:  # after both frameworks: the floor by TF's kernels of this round
                tf = one_round["tensorflow"].get(config.key)
                measure_floor(one_round["placeviz"][config.key], tf, args)
        rounds.append(one_round)
        print(f"round {index + 1}/{args.rounds} done at {time.perf_counter() - started:.0f} s")
    versions = {m.version for r in rounds for side in r.values() for m in side.values()}
    print(f"{'; '.join(sorted(versions))}; load average at the end {os.getloadavg()[0]:.2f}")
    print(
        "median (min-max) over rounds of each measurement's median step; start: the"
        " create_local_cluster call"
    )
    print("\n".join(tabulate(configs, rounds, python is not None)))
    print("\n".join(against_processes(configs, rounds)))
    print("\n".join(against_dask(configs, rounds)))
    print("\n".join(placeviz_details(configs, rounds)))


if __name__ == "__main__":
    main()
