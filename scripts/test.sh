#!/usr/bin/env bash
# Install placeviz with its test tools from the project's own files, lint, and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
python3 -m ruff check placeviz tests benchmarks scripts
python3 -m ruff format --check placeviz tests benchmarks scripts
# The front end's type check, lint and unit tests (pip's build above installed node_modules;
# a checkout whose built extension was already there may lack them).
(
    cd labextension
    [[ -d node_modules ]] || npm ci --no-audit --no-fund
    npm run lint
    npm test
)
python3 -m pytest -q -p no:cacheprovider "$@"
