#!/usr/bin/env bash
# Install placeviz with JupyterLab (pip builds the lab extension with npm) and open the teaching
# notebooks. Machines without a GPU get simulated ones: each %%placement cell asks for --gpus N.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --disable-pip-version-check -e ".[jupyter]"
extra=()
if [[ "$(id -u)" == 0 ]]; then
    extra+=(--allow-root) # containers often run as root; JupyterLab refuses that unless told
fi
exec python3 -m jupyter lab "${extra[@]}" "$@" notebooks/
