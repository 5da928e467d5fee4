#!/usr/bin/env bash
# Everything issues 23, 24 and 26 check on a real card, in one go (the device machine's run): the GPU tests,
# the benchmark, a recorded training step, then the differential, conformance and seed programs
# on the card's logical GPUs. Logs go to $OUT (default /tmp/gpu-check); the last lines summarize.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
pytest=("$PY" -m pytest -p no:cacheprovider -q -m gpu)

{
  nvidia-smi -L
  "$PY" -c 'import sys, numpy, cupy, pynvml; print(sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__)'
  timeout 200 "${pytest[@]}" tests/gpu/test_cuda_runtime.py tests/gpu/test_control_flow_on_card.py tests/gpu/test_dry_run_on_card.py \
    tests/test_session.py tests/test_import_without_cuda.py tests/test_batch_norm.py
} >"$OUT/gpu-tests.txt" 2>&1
timeout 60 "$PY" benchmarks/bench_gpu.py --json "$OUT/bench.json" >"$OUT/bench.txt" 2>&1
timeout 40 "$PY" scripts/record_card_trace.py "$OUT/card-trace.json" >>"$OUT/bench.txt" 2>&1
# These three measure no memory or time: they share the card and the cores.
timeout 240 "${pytest[@]}" -n 12 tests/gpu/test_conformance_on_gpu.py >"$OUT/conformance.txt" 2>&1 &
timeout 120 "${pytest[@]}" tests/gpu/test_differential_gpu.py >"$OUT/differential.txt" 2>&1 &
PLACEVIZ_TEST_GPUS=card timeout 120 "$PY" -m pytest -p no:cacheprovider -q tests/test_seeds.py \
  >"$OUT/seeds.txt" 2>&1 &
wait
for log in gpu-tests bench differential seeds conformance; do
  echo "== $log"
  grep -E "passed|failed|error|ratio|overhead|wrote|NVIDIA|FAILED|Error" "$OUT/$log.txt" | tail -25
done
