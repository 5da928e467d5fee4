"""placeviz works without CUDA: CuPy is imported only when a session uses a real GPU."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import placeviz as pv

ROOT = Path(__file__).resolve().parents[1]

# Records every attempt to import CuPy, so the check means something on machines without it too.
WATCH_CUPY = """
import sys

class _WatchCupy:
    attempts = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "cupy":
            _WatchCupy.attempts.append(name)
        return None

sys.meta_path.insert(0, _WatchCupy())
"""

TWO_SIMULATED_GPUS = """
import numpy as np
import placeviz as pv

{simulate}
gpus = pv.config.list_physical_devices("GPU")
assert len(gpus) == 2 and all(g.simulated for g in gpus), gpus
a = pv.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
b = pv.constant(np.ones((3, 2), dtype=np.float32))
with pv.device("/gpu:0"):
    left = pv.matmul(a, b)
with pv.device("/gpu:1"):
    right = pv.matmul(a, b)
with pv.device("/cpu:0"):
    total = pv.add_n([left, right])
with pv.Session() as sess:
    value = sess.run(total)
    assert sess.placement[right.op.name].endswith("GPU:1"), sess.placement
np.testing.assert_array_equal(value, 2 * (np.arange(6).reshape(2, 3) @ np.ones((3, 2))))
assert type(value) is np.ndarray
assert not _WatchCupy.attempts, _WatchCupy.attempts
assert "cupy" not in sys.modules
print("ok")
"""


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PLACEVIZ_") and k != "TF_FORCE_GPU_ALLOW_GROWTH"
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("simulate", "env"),
    [
        ('pv.config.simulate_gpus(2, profile="K40")', {}),
        ("", {"PLACEVIZ_SIMULATED_GPUS": "2", "PLACEVIZ_SIMULATED_PROFILE": "T4"}),
    ],
    ids=["simulate_gpus", "environment"],
)
def test_simulated_gpus_never_import_cupy(simulate: str, env: dict[str, str]) -> None:
    code = WATCH_CUPY + textwrap.dedent(TWO_SIMULATED_GPUS).format(simulate=simulate)
    result = run_python(code, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_importing_placeviz_does_not_import_cupy() -> None:
    code = WATCH_CUPY + "import placeviz\nassert not _WatchCupy.attempts\n"
    code += "print(sys.modules.get('cupy'))"
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "None"


# -- real GPUs (skipped by conftest where there is none) ----------------------------------------
@pytest.mark.gpu
def test_real_gpus_are_listed_and_run_a_matmul() -> None:
    gpus = pv.config.list_physical_devices("GPU")
    assert gpus
    assert not any(g.simulated for g in gpus)
    assert all("simulated" not in repr(g) for g in gpus)
    rng = np.random.default_rng(0)
    # Small integers: every product and sum is exact in float32, on any GPU.
    a = rng.integers(-4, 5, size=(64, 32)).astype(np.float32)
    b = rng.integers(-4, 5, size=(32, 16)).astype(np.float32)
    with pv.device("/gpu:0"):
        product = pv.matmul(pv.constant(a), pv.constant(b))
    with pv.Session() as sess:
        value = sess.run(product)
        device = sess.placement.device(product.op.name)
    assert device.name == "/job:localhost/replica:0/task:0/device:GPU:0"
    assert device.kind == "real"
    assert device.backend == "cupy"
    assert type(value) is np.ndarray
    np.testing.assert_array_equal(value, a @ b)


@pytest.mark.gpu
def test_cuda_visible_devices_restricts_the_listing() -> None:
    code = (
        "import placeviz as pv\n"
        "gpus = pv.config.list_physical_devices('GPU')\n"
        "print(len(gpus), [g.simulated for g in gpus], [g.name for g in gpus])\n"
    )
    result = run_python(code, CUDA_VISIBLE_DEVICES="0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1 [False] ['/physical_device:GPU:0']"
