"""The wheel ships the prebuilt labextension where JupyterLab finds it, and the standalone bundle.

Built the way a user's pip builds it (hatchling with hatch-jupyter-builder: the ``wheel``
fixture, jupyter_helpers.build_wheel); the front end built by the test command's editable install
is reused (``skip-if-exists``), so this takes seconds.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

from jupyter_helpers import install_without_node

SHARED = "share/jupyter/labextensions/placeviz/"


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
    assert "placeviz/api/tf1_names.txt" in names  # the names a missing-API error looks up


def test_the_wheel_installs_and_jupyterlab_lists_it_without_node(
    wheel: Path, tmp_path: Path
) -> None:
    """A user installing the wheel needs no Node: in a fresh venv, run with nothing but the venv
    on PATH (no node, no npm), pip installs it and JupyterLab finds the extension in the venv.
    The venv sees this interpreter's packages (JupyterLab, NumPy) but not its Jupyter data."""
    python, bare = install_without_node(wheel, tmp_path)
    bare["JUPYTER_PLATFORM_DIRS"] = "1"
    listed = subprocess.run(
        [python, "-m", "jupyterlab.labextensions", "list"],  # `jupyter labextension list`
        env=bare,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = listed.stdout + listed.stderr
    venv = tmp_path / "venv"
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
