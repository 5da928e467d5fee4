"""The wheel ships the prebuilt labextension where JupyterLab finds it, and the standalone bundle.

Built the way a user's pip builds it (hatchling with hatch-jupyter-builder); the front end built
by the test command's editable install is reused (``skip-if-exists``), so this takes seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = "share/jupyter/labextensions/placeviz/"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(folder)],
        check=True,
        timeout=600,
    )
    (built,) = folder.glob("placeviz-*.whl")
    return built


def test_the_wheel_holds_the_labextension_and_the_standalone_bundle(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        data = "-".join(wheel.name.split("-")[:2]) + ".data/data/"  # placeviz-0.1.0.data/data/
        package = json.loads(archive.read(data + SHARED + "package.json"))
        install = json.loads(archive.read(data + SHARED + "install.json"))
    assert package["name"] == "placeviz"
    assert package["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")
    assert data + SHARED + package["jupyterlab"]["_build"]["load"] in names
    assert install["packageName"] == "placeviz"
    assert "placeviz/inspector/static/placeviz-inspector.js" in names


def test_the_wheel_installs_and_jupyterlab_lists_it_without_node(
    wheel: Path, tmp_path: Path
) -> None:
    """A user installing the wheel needs no Node: in a fresh venv, run with nothing but the venv
    on PATH (no node, no npm), pip installs it and JupyterLab finds the extension in the venv.
    The venv sees this interpreter's packages (JupyterLab, NumPy) but not its Jupyter data."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120
    )
    bare = {"PATH": str(venv / "bin"), "HOME": str(tmp_path), "JUPYTER_PLATFORM_DIRS": "1"}
    assert shutil.which("node", path=bare["PATH"]) is None
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)]
    subprocess.run(pip, env=bare, check=True, timeout=300)
    listed = subprocess.run(
        [python, "-m", "jupyterlab.labextensions", "list"],  # `jupyter labextension list`
        env=bare,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = listed.stdout + listed.stderr
    share = str(venv / "share" / "jupyter" / "labextensions")
    assert share in output, output
    section = output.split(share, 1)[1]
    assert "placeviz v0.1.0" in section.split("\n/")[0] and "enabled" in section, output
    found = subprocess.run(
        [python, "-c", "import placeviz, sys; print(placeviz.__file__)"],
        env=bare,
        cwd=tmp_path,  # not the checkout, which `python -c` would put first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.startswith(str(venv)), found.stdout  # the wheel's, not this checkout's
