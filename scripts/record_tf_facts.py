"""Record what real TensorFlow does with each conformance program, as tests/conformance/facts.json.

Run with TensorFlow's venv (TensorFlow is never a dependency of placeviz):

    /work/tfvenv/bin/python scripts/record_tf_facts.py [NAME_SUBSTRING ...]

With names, only the matching programs are re-recorded and the others kept. Each batch of
programs runs in its own subprocess, so no TensorFlow state leaks from one batch to the next; each
program gets a fresh graph and session. Assigned devices come from ``log_device_placement``, which
TensorFlow's C++ placer prints with printf, so the worker reads them from its own file descriptor 1.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "conformance" / "facts.json"
BATCH = 60
# "name: (Type): /job:localhost/replica:0/task:0/device:CPU:0", one line per placed op.
PLACEMENT_LINE = re.compile(r"^(?P<name>[^\s:]\S*): \((?P<type>\w+)\): (?P<device>/job:\S+)$")

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(1, str(ROOT))  # the zoo programs build placeviz.examples.zoo's models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="record only programs whose name holds one")
    parser.add_argument("--worker", metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _work(args.names, Path(args.worker))
        return
    from conformance.programs import PROGRAMS

    chosen = [n for n in PROGRAMS if not args.names or any(s in n for s in args.names)]
    old = json.loads(FACTS.read_text()) if FACTS.exists() else {"programs": {}}
    recorded = {n: f for n, f in old["programs"].items() if n in PROGRAMS}
    version = old.get("tensorflow_version")
    problems: list[str] = []
    for start in range(0, len(chosen), BATCH):
        batch = chosen[start : start + BATCH]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "facts.json"
            # tf.compat.v1.layers and rnn_cell need Keras 2 (tf_keras, installed --no-deps).
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
            subprocess.run(
                [sys.executable, __file__, "--worker", str(out), *batch], check=True, env=env
            )
            result = json.loads(out.read_text())
        version = result["tensorflow_version"]
        recorded.update(result["programs"])
        problems.extend(result["problems"])
        print(f"recorded {start + len(batch)}/{len(chosen)}", file=sys.stderr)
    document = {"tensorflow_version": version, "programs": dict(sorted(recorded.items()))}
    FACTS.write_text(_dump(document))
    print(f"{len(recorded)} programs in {FACTS.relative_to(ROOT)}", file=sys.stderr)
    if problems:
        raise SystemExit("not recorded:\n" + "\n".join(problems))


def _dump(document: dict[str, Any]) -> str:
    """Sorted keys and one line per op and per fetched result, so a re-recording diffs small."""
    lines: dict[str, str] = {}

    def line(value: Any) -> str:
        key = f"@{len(lines)}@"
        lines[key] = json.dumps(value, sort_keys=True)
        return key

    programs = {
        name: {
            **facts,
            "ops": {op: line(fact) for op, fact in facts["ops"].items()},
            "values": [line(value) for value in facts["values"]],
        }
        for name, facts in document["programs"].items()
    }
    text = json.dumps({**document, "programs": programs}, indent=1, sort_keys=True)
    return re.sub(r'"(@\d+@)"', lambda m: lines[m[1]], text) + "\n"


def _work(names: list[str], out: Path) -> None:
    import tensorflow as tf
    from conformance.harness import Backend, collect
    from conformance.programs import PROGRAMS

    tf1 = tf.compat.v1
    tf1.disable_v2_behavior()
    tf1.logging.set_verbosity(tf1.logging.ERROR)
    libc = ctypes.CDLL(None)
    programs: dict[str, Any] = {}
    problems: list[str] = []
    for name in names:
        program = PROGRAMS[name]
        with tempfile.TemporaryFile("w+") as log:
            sys.stdout.flush()
            saved = os.dup(1)
            os.dup2(log.fileno(), 1)
            try:
                lines: list[str] = []

                def placement(
                    sess: Any, log: Any = log, lines: list[str] = lines
                ) -> dict[str, str]:
                    libc.fflush(None)
                    log.seek(0)
                    lines.extend(log.read().splitlines())
                    return _assigned(lines)

                facts = collect(program, Backend(tf1, placement, {"log_device_placement": True}))
            finally:
                libc.fflush(None)
                os.dup2(saved, 1)
                os.close(saved)
        error = facts["error"]
        if error is not None:
            message = error["message"]
            missing = [w for w in program.error if w not in message]
            if missing:
                problems.append(f"{name}: TensorFlow's message lacks {missing}: {message[:600]}")
                continue
            error["words"] = list(program.error)
            error["message"] = _summary(message, program.error)
        elif program.error:
            problems.append(f"{name}: declares error words but TensorFlow raised nothing")
            continue
        if "values" not in program.facts:
            facts["values"] = [_without_values(v) for v in facts["values"]]
        programs[name] = facts
    result = {"tensorflow_version": tf.__version__, "programs": programs, "problems": problems}
    out.write_text(json.dumps(result))


def _without_values(described: Any) -> Any:
    """Random results keep their dtype and shape only, so re-recording does not change them."""
    if isinstance(described, dict) and described.keys() == {"dtype", "shape", "value"}:
        return {**described, "value": None}
    if isinstance(described, dict):
        return {k: _without_values(v) for k, v in described.items()}
    if isinstance(described, list):
        return [_without_values(v) for v in described]
    return described


def _summary(message: str, words: tuple[str, ...]) -> str:
    """The line of TensorFlow's message that holds its key words (a reader's reference; the
    rest holds file paths that change from machine to machine)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if words[0] in line if words else "{{node" in line:
            return line[:300]
    return lines[0][:300] if lines else ""


def _assigned(lines: list[str]) -> dict[str, str]:
    assigned: dict[str, str] = {}
    for line in lines:
        match = PLACEMENT_LINE.match(line.strip())
        if match:
            assigned[match["name"]] = match["device"]
    return assigned


if __name__ == "__main__":
    main()
