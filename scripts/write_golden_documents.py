"""Write the golden placement documents the front end's tests render (vitest: golden.test.ts).

Run after changing what Python writes into a document; tests/test_golden_documents.py fails while
the committed documents' structure differs from what placeviz writes now.
"""

from __future__ import annotations

import json

from placeviz.examples.documents import GOLDEN, GOLDEN_FOLDER

if __name__ == "__main__":
    GOLDEN_FOLDER.mkdir(parents=True, exist_ok=True)
    for name, build in GOLDEN.items():
        path = GOLDEN_FOLDER / f"{name}.json"
        path.write_text(json.dumps(build().to_document(), separators=(",", ":")) + "\n", "utf-8")
        print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB)")
