"""What tests that start Jupyter kernels, or install placeviz's wheel, share."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kernel_variables(base: Path, python: str, display_name: str) -> dict[str, str]:
    """Variables under which Jupyter finds only a ``python3`` kernelspec running ``python`` (made
    under ``base``) and no user config."""
    spec_dir = base / "jupyter-path" / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": display_name,
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return {
        "JUPYTER_PATH": str(base / "jupyter-path"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "IPYTHONDIR": str(base / "ipython"),
    }


def build_wheel(folder: Path) -> Path:
    """placeviz's wheel, built as a user's pip builds it (the front end built by the test
    command's editable install is reused, so this takes seconds)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(folder)],
        check=True,
        timeout=600,
    )
    (built,) = folder.glob("placeviz-*.whl")
    return built


def install_without_node(wheel: Path, base: Path) -> tuple[str, dict[str, str]]:
    """A fresh venv under ``base`` with placeviz only from ``wheel``, installed with nothing but
    the venv on PATH (no node, no npm): its python, and that environment. The venv sees this
    interpreter's packages (JupyterLab, NumPy) but not its Jupyter data or this checkout."""
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # This interpreter's packages, seen through a .pth file: ``--system-site-packages`` would
    # give the base interpreter's instead, which lack JupyterLab when this one is itself a venv.
    # Directories named in a .pth file are added without their own .pth files, so an editable
    # placeviz of this environment stays out of sight.
    outer = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    (own,) = (venv / "lib").glob("python3*/site-packages")
    (own / "_tests_outer_environment.pth").write_text("".join(f"{p}\n" for p in outer))
    env = {"PATH": str(venv / "bin"), "HOME": str(base)}
    assert shutil.which("node", path=env["PATH"]) is None
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)]
    subprocess.run(pip, env=env, check=True, timeout=300, cwd=base)
    return python, env
