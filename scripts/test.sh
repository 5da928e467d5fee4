#!/usr/bin/env bash
# Install placeviz with its test tools from the project's own files, lint, and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
python3 -m ruff check placeviz tests benchmarks
python3 -m ruff format --check placeviz tests benchmarks
python3 -m pytest -q -p no:cacheprovider "$@"
