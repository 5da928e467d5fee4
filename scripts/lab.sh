#!/usr/bin/env bash
# Install placeviz with JupyterLab (pip builds the lab extension with npm) and open the teaching
# notebooks. Machines without a GPU get simulated ones: each %%placement cell asks for --gpus N.
#
# JupyterLab works on my_notebooks/, the student's own copy of notebooks/ (git ignores it): what
# a session saves (outputs, files a cell writes such as towers.html) stays there, so the tracked
# notebooks stay as committed and the tests (scripts/test.sh) read them unchanged. A notebook is
# copied only when the copy lacks it: delete my_notebooks/ to start over.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --disable-pip-version-check -e ".[jupyter,cluster]"
mkdir -p my_notebooks
for item in notebooks/*; do
    [[ -e "my_notebooks/${item##*/}" ]] || cp -R "$item" my_notebooks/
done
extra=()
if [[ "$(id -u)" == 0 ]]; then
    extra+=(--allow-root) # containers often run as root; JupyterLab refuses that unless told
fi
exec python3 -m jupyter lab "${extra[@]}" "$@" my_notebooks/
