"""Write docs/api.md, placeviz's API reference, from its public namespaces and its op registry.

Run after adding a name, a namespace or an op type; with --check, write nothing and exit 1 when
the committed file is stale (tests/test_api_docs.py fails then too).
"""

from __future__ import annotations

import argparse
import sys

from placeviz.api import reference

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/api.md is stale")
    args = parser.parse_args()
    text = reference.markdown()
    if args.check:
        if not reference.PATH.exists() or reference.PATH.read_text("utf-8") != text:
            sys.exit(f"{reference.PATH} is stale: run python3 scripts/generate_api_docs.py")
        print(f"{reference.PATH} is up to date")
    else:
        reference.PATH.write_text(text, encoding="utf-8")
        print(f"wrote {reference.PATH}")
