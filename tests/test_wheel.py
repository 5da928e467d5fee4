"""The wheel ships the prebuilt labextension where JupyterLab finds it, and the standalone bundle.

Built the way a user's pip builds it (hatchling with hatch-jupyter-builder); the front end built
by the test command's editable install is reused (``skip-if-exists``), so this takes seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = "share/jupyter/labextensions/placeviz/"


def test_the_wheel_holds_the_labextension_and_the_standalone_bundle(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("placeviz-*.whl")
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
